import { createFileRoute } from '@tanstack/react-router';
import { PricingPage } from '../features/pricing/components/pricing-page.tsx';

/** Public: visitors see the default group's prices, signed-in users their own group's. */
export const Route = createFileRoute('/pricing')({ component: PricingPage });
