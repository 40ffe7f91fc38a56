import { defineProject } from 'vitest/config'

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'dsh-mcp',
    include: ['test/**/*.test.ts'],
    // Each test starts real servers (child processes, HTTP): slow on a loaded machine.
    testTimeout: 20_000,
    // Two of the MCP SDK's dependencies publish a `source` condition of their own (TypeScript),
    // which Node, run with the `source` condition above, would load: vite transforms the SDK and
    // those two instead.
    server: {
      deps: {
        inline: [
          /[\\/]@modelcontextprotocol[\\/]sdk[\\/]/,
          /[\\/]eventsource-parser[\\/]/,
          /[\\/]eventsource[\\/]/,
        ],
      },
    },
  },
})
