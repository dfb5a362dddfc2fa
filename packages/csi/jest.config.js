import { projectConfig } from '../../jest.preset.js';

export default projectConfig(import.meta.url, 'csi');
