// class-transformer ships the storage of @Type() metadata without a declaration beside its CommonJS build.
declare module 'class-transformer/cjs/storage' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage';
}
