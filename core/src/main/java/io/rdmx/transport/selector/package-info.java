/**
 * rdmx's own socket engine, shared by the stream providers ({@code shm} on Unix-domain sockets, {@code tcp} on TCP
 * sockets): the node with its one I/O thread and JDK {@link java.nio.channels.Selector}
 * ({@link io.rdmx.transport.selector.SelectorNode}), a connection's socket with leader/follower input
 * ({@link io.rdmx.transport.selector.SocketLink}), the receive side and handshake over the shared
 * {@link io.rdmx.transport.wire.FrameReceiver} ({@link io.rdmx.transport.selector.SocketHandler}), and the one send
 * side of the stream providers ({@link io.rdmx.transport.selector.SocketConnection}). A provider subclasses the
 * node for how it listens, dials and accepts, and the connection for what it adds. Not API.
 */
package io.rdmx.transport.selector;
