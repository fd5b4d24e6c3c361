/**
 * The {@code tcp} provider, for hosts without RDMA NICs: the stream protocol over TCP sockets on core's selector
 * engine ({@link io.rdmx.transport.selector.SelectorNode}). The receiver's I/O thread (or a thread waiting for
 * the input, reading the socket itself) places WRITE data directly into the target region after checking key,
 * offset and length; a SEND is delivered after the WRITEs posted before it.
 */
package io.rdmx.transport.tcp;
