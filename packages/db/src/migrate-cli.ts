import { loadConfig } from '@notify/config';
import { migrate } from './migrate';

const config = loadConfig();
const applied = await migrate({ url: config.databaseUrl, logger: console });
console.log(applied.length ? `Applied ${applied.length} migration(s).` : 'The database is up to date.');
