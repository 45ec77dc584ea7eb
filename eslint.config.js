// ESLint with neostandard, the maintained successor of `standard`, whose style the code
// already follows (no semicolons, space before a function's parentheses, single quotes).
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    // Generated code (npm run generate, npm run sdk) and build output are not ours to style.
    ignores: [
      'dist/**', 'coverage/**', '.tap/**', '.data/**', 'test-output/**',
      'src/generated/**',
      'clients/typescript/src/generated/**', 'clients/typescript/dist/**',
    ],
  }),
  {
    rules: {
      // `void promise;` marks a promise left unawaited on purpose (a timer's check, a
      // signal handler's close); as an expression it stays an error.
      'no-void': ['error', { allowAsStatement: true }],
    },
  },
  {
    // One job per file, a function readable on a screen (issue 58): a file of src/ past 200
    // lines, or a function past 60 (blank lines and comments aside), is to be split.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 200 }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
]
