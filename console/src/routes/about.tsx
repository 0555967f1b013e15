import { createFileRoute } from '@tanstack/react-router';
import { AboutPage } from '../features/home/components/home-page.tsx';

export const Route = createFileRoute('/about')({ component: AboutPage });
