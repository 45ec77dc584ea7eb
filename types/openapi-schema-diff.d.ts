// The package ships no types; only what scripts/openapi-breaking.ts uses.
declare module 'openapi-schema-diff' {
  export default function compare (source: object, target: object): unknown
}
