/**
 * The stream wire protocol shared by the {@code tcp} and {@code shm} providers: framed verbs over one Netty
 * channel per connection (TCP, or a Unix-domain socket for shm). See
 * {@link io.rdmx.transport.stream.FrameDescriptor} for the layout. Not API.
 */
package io.rdmx.transport.stream;
