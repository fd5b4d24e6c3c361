/**
 * The wire format of the stream protocol that the {@code shm} provider (on Unix-domain sockets) and the
 * {@code tcp} provider ({@code rdmx-tcp}, on TCP sockets) both speak, both on the selector engine
 * ({@code io.rdmx.transport.selector}): the frame layout and handshake
 * ({@link io.rdmx.transport.wire.FrameDescriptor}), the {@code ByteBuffer} codec with the checks of peer input
 * ({@link io.rdmx.transport.wire.FrameBuffers}), the handshake proofs ({@link io.rdmx.transport.wire.AuthProof}),
 * and what placing WRITE data through shared memory needs ({@link io.rdmx.transport.wire.Placer}). Not API.
 */
package io.rdmx.transport.wire;
