export { organizationJson, memberJson, keyJson } from './representations';
