// `strato deploy --preview` and `strato preview image`: the app in local containers with the platform in front,
// and the base image they run in, built from this machine's Python.
export { startPreview, previewKey, PREVIEW_STEPS, type PreviewOptions, type PreviewStep, type RunningPreview } from './preview';
export { buildBaseImage, checkImageName, type BaseImageResult } from './image';
export { PLATFORM_HOST } from './launcher';
export { readPreviewState, type PreviewState } from './state';
