// Unit and integration tests of every package (e2e suites run separately: npm run e2e).
export default {
  projects: ['<rootDir>/packages/*'],
};
