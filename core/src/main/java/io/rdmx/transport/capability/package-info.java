/**
 * The fast-path capabilities of a connection: transport internals that rdmx's own layers (the channel layer, the
 * completion queue's waiter, the shuffle through its channels) use beside {@code post}, kept off the public
 * {@link io.rdmx.transport.Connection} interface in the spirit of Netty keeping {@code Channel.Unsafe} off user
 * code. Not API: may change in any release.
 *
 * <p>A caller asks a connection once, at setup, with {@link io.rdmx.transport.Connection#capability(Class)} and
 * keeps what it got (the lookup may allocate; the capability's calls do not). A provider that does not offer a
 * capability returns empty, and the caller keeps its fallback: WRITEs instead of a mapped view, notification
 * messages instead of bells, the completion queue instead of inline completions, sleeping instead of reading the
 * input itself, one write per request instead of corked ones.
 *
 * <table>
 *   <caption>Which provider's connection offers what</caption>
 *   <tr><th>capability</th><th>loopback</th><th>shm</th><th>tcp</th><th>verbs</th><th>disni</th></tr>
 *   <tr><td>{@link io.rdmx.transport.capability.RemoteMapping}</td><td>yes</td><td>yes</td><td>-</td><td>-</td>
 *       <td>-</td></tr>
 *   <tr><td>{@link io.rdmx.transport.capability.Bells}</td><td>-</td><td>yes</td><td>-</td><td>-</td>
 *       <td>-</td></tr>
 *   <tr><td>{@link io.rdmx.transport.capability.InlineCompletions}</td><td>yes (unless a test fault queues
 *       them)</td><td>-</td><td>yes</td><td>yes</td><td>yes</td></tr>
 *   <tr><td>{@link io.rdmx.transport.capability.InputFollowing}</td><td>-</td><td>yes</td><td>yes</td>
 *       <td>yes (spinning looks only)</td><td>-</td></tr>
 *   <tr><td>{@link io.rdmx.transport.capability.Corking}</td><td>-</td><td>yes</td><td>yes</td><td>-</td>
 *       <td>-</td></tr>
 * </table>
 */
package io.rdmx.transport.capability;
