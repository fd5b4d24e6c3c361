/**
 * The Netty side of the stream protocol, used by the {@code tcp} provider: framed verbs over one Netty channel
 * per connection. The wire format and its checks are in {@link io.rdmx.transport.wire} (shared with the
 * {@code shm} provider, which speaks the same protocol on the JDK's Unix-domain sockets). Not API.
 */
package io.rdmx.transport.stream;
