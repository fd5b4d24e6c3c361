/**
 * The rdmx transport SPI: the verbs model, small and DiSNI/jVerbs-like.
 *
 * <p>A {@link io.rdmx.transport.Fabric} (a provider, found by name through {@link java.util.ServiceLoader})
 * opens a local {@link io.rdmx.transport.Node}. A node listens on its {@link io.rdmx.transport.Node#address()}
 * and connects to other nodes; there is exactly one {@link io.rdmx.transport.Connection} (queue pair) per pair
 * of nodes, shared by every thread. Memory is registered once as {@link io.rdmx.transport.Region}s; the
 * descriptors of a node's remotely writable or readable regions ({@link io.rdmx.transport.RemoteRegion}) are
 * exchanged at connection setup. A connection posts {@link io.rdmx.transport.WorkRequest}s: one-sided WRITE
 * (optionally with an immediate) and READ, SEND, and RECV into pre-posted buffers. Their outcomes arrive as
 * {@link io.rdmx.transport.Completion}s on the node's {@link io.rdmx.transport.CompletionQueue}, which can be
 * polled or waited on (the waiter sleeps; nothing spins).
 *
 * <p>Optional capabilities: what a provider offers beyond the verbs model for rdmx's own fast paths (a peer's
 * memory mapped into this process where it shares this host, {@code shm} and {@code loopback}; bells; inline
 * completions; leader/follower input; corking) is not on {@link io.rdmx.transport.Connection}: it is reached
 * through {@link io.rdmx.transport.Connection#capability(Class)}, which returns one of the small interfaces of
 * {@link io.rdmx.transport.capability} or empty, and the caller keeps its fallback (WRITEs, notification messages,
 * the completion queue). The channel layer uses them for its mapped channels and its wake-ups.
 *
 * <h2>Threading contract</h2>
 * <ul>
 *   <li>{@code Connection.post*} may be called by any thread; posts from one thread are executed in order,
 *       and completions of the send queue are delivered in the order the requests were posted (RC semantics).</li>
 *   <li>A SEND or WRITE_WITH_IMM is delivered after every WRITE posted before it on the same connection; a READ
 *       sees every WRITE posted before it on the same connection.</li>
 *   <li>A {@link io.rdmx.transport.CompletionQueue} has a single consumer at a time (the network thread);
 *       producers are the providers' I/O threads and posting threads.</li>
 *   <li>Optionally, a connection delivers its completions to an
 *       {@link io.rdmx.transport.InlineCompletionHandler} instead, on the thread that produces them, one call at
 *       a time ({@link io.rdmx.transport.capability.InlineCompletions}; {@code shm} keeps to the queue).</li>
 *   <li>The memory of a request's local region must not be modified until its completion is seen
 *       (providers may send straight from it), exactly as with verbs.</li>
 * </ul>
 *
 * <h2>Errors</h2>
 * Hot-path calls return named codes ({@link io.rdmx.transport.Post}); misuse (bad offsets, a released region)
 * throws {@link java.lang.IllegalArgumentException} or {@link java.lang.IllegalStateException} with
 * {@code name=value} context. A remote access error (wrong key, out of bounds, region not remotely writable)
 * completes the request with {@link io.rdmx.transport.Status#REMOTE_ACCESS_ERROR}, writes nothing, and moves the
 * connection to the error state, as a verbs queue pair does; a refused READ on loopback, shm and tcp fails that
 * READ only (the owner answered it), while on verbs and disni it is the queue pair's error as any other. The death or hang of a peer, or {@code close},
 * flushes every outstanding request and posted receive with {@link io.rdmx.transport.Status#FLUSHED}, whose
 * {@link io.rdmx.transport.Completion#error()} names the peer, and wakes every waiter.
 */
package io.rdmx.transport;
