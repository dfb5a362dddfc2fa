export * from './kube-client.js';
