import { defineConfig } from 'prisma/config';

// The CLI reads the connection from here (Prisma 7); the running services
// connect through @prisma/adapter-pg with the same DATABASE_URL.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  },
});
