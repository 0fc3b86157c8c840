// `npm run lint` (with dependency-cruiser's layering check, .dependency-cruiser.cjs): typescript-eslint's
// type-aware recommended rules on the TypeScript sources, ESLint's recommended rules on the build scripts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Node's globals the plain-JavaScript scripts use (they are not type-checked). */
const NODE_GLOBALS = Object.fromEntries(
  ['process', 'console', 'URL', 'Buffer', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'AbortController', 'fetch', 'performance']
    .map((name) => [name, 'readonly']),
);

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'out/', 'playground/dist/', 'bench/results/', 'test/fixtures/', '.bench-builds/', '.devkit/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's test()/describe() return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }],
      }],
      // Shapes and ranges are printed as `${[w, h]}` (→ "w,h") in messages and cache keys on purpose.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowArray: true, allowNumber: true, allowBoolean: true, allowNullish: true }],
      // `_`-prefixed names mark values deliberately left unused (destructuring, callback parameters).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // The two `any`s left (the CPU task table, the command table) go with issue 19's typed boundaries; the
      // no-unsafe-* rules below still catch what flows out of an `any`.
      '@typescript-eslint/no-explicit-any': 'off',
      // Redundant casts are style, not bugs; removing them would touch some 40 files being rewritten for issue 19.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // An async function without await is deliberate here: its errors reach the caller as rejections, not throws.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Options, not environment variables (docs/architecture.md): operations and core take their behaviour from their
    // arguments and the GPU context; the Node entry or the CLI maps a variable onto an option, at the edge.
    files: ['src/ops/**/*.ts', 'src/core/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error',
        { selector: "MemberExpression[property.name='env'][object.name='process']", message: 'No environment variable under src/ops or src/core: take an option (op parameter, RunOptions or GpuContextOptions) and map the variable onto it in src/node or src/cli.' },
        { selector: "MemberExpression[property.name='env'][object.property.name='process']", message: 'No environment variable under src/ops or src/core: take an option (op parameter, RunOptions or GpuContextOptions) and map the variable onto it in src/node or src/cli.' },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests and benchmarks read JSON (CLI --json output, Python references, records) as untyped data by design.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['scripts/**/*.{js,mjs}', 'bin/**/*.js', '*.js', '*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: NODE_GLOBALS },
  },
);
