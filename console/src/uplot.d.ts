// Types of the vendored uPlot (scripts/build-console.mjs copies its minified build to dist/console/uplot.js).
export { default } from 'uplot';
