export { startProcess, type RunningProcess } from './process';
