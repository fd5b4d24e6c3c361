/**
 * The {@code tcp} provider, for hosts without RDMA NICs: the stream protocol over Netty TCP channels (epoll when
 * available). The receiver's I/O thread places WRITE data directly into the target region after checking key,
 * offset and length; a SEND is delivered after the WRITEs posted before it.
 */
package io.rdmx.transport.tcp;
