// Swagger UI plugins, written into its initializer by @fastify/swagger-ui as their source
// text (Function.prototype.toString). Made from JavaScript text with `new Function`, so that
// what the browser runs is exactly this text: a TypeScript function's text is the compiler's
// output, which under tsx calls helpers (`__name`) that the page does not have.

type SwaggerUiPlugin = (system: unknown) => Record<string, unknown>
// eslint-disable-next-line no-new-func -- fixed text of this module, never input
const plugin = (body: string): SwaggerUiPlugin => new Function('system', body) as SwaggerUiPlugin

/** Swagger UI's own plugin that loads the document from `url`: `plugins` replaces the default list. */
export const downloadUrl = plugin('return SwaggerUIBundle.plugins.DownloadUrl(system)')

/**
 * An expanded operation documents a dozen statuses, each with the headers every response
 * carries: its error responses (4xx, 5xx) show as one line, status and description, and a
 * button shows the example and headers of that one. The 2xx and 304 show in full.
 */
export const collapseErrorResponses = plugin(`
  var h = system.React.createElement
  var useState = system.React.useState
  return { wrapComponents: { response: function (Original, sys) {
    return function CollapsedResponse (props) {
      var state = useState(false)
      var code = String(props.code)
      if (state[0] || !/^[45]/.test(code)) return h(Original, props)
      var Markdown = sys.getComponent('Markdown', true)
      return h('tr', { className: 'response response-collapsed', 'data-code': code },
        h('td', { className: 'response-col_status' }, code),
        h('td', { className: 'response-col_description' },
          h(Markdown, { source: props.response.get('description') }),
          h('button', { type: 'button', className: 'btn response-expand', onClick: function () { state[1](true) } }, 'Example and headers')),
        h('td', { className: 'response-col_links' }))
    }
  } } }
`)
