import type { ReactNode } from 'react';

export function AuthCard({ title, children }: { title: ReactNode; children: ReactNode }) {
  return (
    <main className="flex justify-center px-4 py-10">
      <div className="w-full max-w-sm rounded-lg border border-gray-200 bg-white p-6 shadow-sm dark:border-gray-800 dark:bg-gray-900">
        <h1 className="mb-5 text-center text-xl font-semibold">{title}</h1>
        {children}
      </div>
    </main>
  );
}
