import type { Attributes, AttributeValue, Exception, Link, Span, SpanContext, SpanStatus, TimeInput } from '@opentelemetry/api'

// A sampled span as the recorder keeps it (span-recorder.ts): the fields OTLP sends and
// nothing more, handed to the exporters when it ends. The API's Span, so the call sites are
// those of any OpenTelemetry tracer.

/** Epoch milliseconds (fractional) of an OpenTelemetry time: now when none. */
export function epochMs (time?: TimeInput): number {
  if (time === undefined) return performance.timeOrigin + performance.now()
  if (typeof time === 'number') return time
  if (time instanceof Date) return time.getTime()
  return time[0] * 1e3 + time[1] / 1e6
}

export interface SpanEvent { name: string, timeMs: number, attributes: Attributes | undefined }

export class RecordedSpan implements Span {
  readonly #context: SpanContext
  readonly #ended: (span: RecordedSpan) => void
  #done = false
  name: string
  endMs = 0
  /** Set after the start (setAttribute); read after `base`, so a key set here wins. */
  own: Attributes | undefined
  status: SpanStatus = { code: 0 }
  events: SpanEvent[] | undefined
  links: Link[] | undefined

  constructor (
    ended: (span: RecordedSpan) => void,
    context: SpanContext,
    name: string,
    /** OpenTelemetry's API numbering (0 internal, 1 server, 2 client, 3 producer, 4 consumer). */
    readonly kind: number,
    readonly parentSpanId: string | undefined,
    /** The caller's attributes at the start, kept as given (a statement's are shared): never written to. */
    readonly base: Attributes | undefined,
    links: Link[] | undefined,
    readonly startMs: number
  ) {
    this.#ended = ended
    this.#context = context
    this.name = name
    this.links = links !== undefined && links.length > 0 ? [...links] : undefined
  }

  spanContext (): SpanContext { return this.#context }
  isRecording (): boolean { return !this.#done }

  setAttribute (key: string, value: AttributeValue): this {
    if (!this.#done && value !== undefined && value !== null) (this.own ??= {})[key] = value
    return this
  }

  setAttributes (attributes: Attributes): this {
    for (const [key, value] of Object.entries(attributes)) if (value !== undefined) this.setAttribute(key, value)
    return this
  }

  addEvent (name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.#done) return this
    const isTime = typeof attributesOrTime === 'number' || attributesOrTime instanceof Date || Array.isArray(attributesOrTime)
    const attributes = isTime ? undefined : attributesOrTime as Attributes | undefined
    ;(this.events ??= []).push({ name, timeMs: epochMs(isTime ? attributesOrTime as TimeInput : time), attributes })
    return this
  }

  addLink (link: Link): this {
    if (!this.#done) (this.links ??= []).push(link)
    return this
  }

  addLinks (links: Link[]): this {
    for (const link of links) this.addLink(link)
    return this
  }

  setStatus (status: SpanStatus): this {
    if (!this.#done) this.status = status
    return this
  }

  updateName (name: string): this {
    if (!this.#done) this.name = name
    return this
  }

  /** An `exception` event, with the attributes the semantic conventions name. */
  recordException (exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = typeof exception === 'string'
      ? { 'exception.message': exception }
      : { 'exception.type': exception.name ?? String(exception.code ?? ''), 'exception.message': exception.message ?? '', ...(exception.stack !== undefined ? { 'exception.stacktrace': exception.stack } : {}) }
    this.addEvent('exception', attributes, time)
  }

  end (endTime?: TimeInput): void {
    if (this.#done) return
    this.#done = true
    this.endMs = epochMs(endTime)
    this.#ended(this)
  }
}
