/**
 * Request/response over ring channels, with no framework types: {@link io.rdmx.rpc.RpcServer} serves methods
 * (int ids) through handlers ({@link io.rdmx.rpc.RpcHandler}) on a bounded pool of handler threads;
 * {@link io.rdmx.rpc.RpcClient} calls servers by address, synchronously or asynchronously, with many
 * outstanding calls per server multiplexed by call id over one ring.
 *
 * <ul>
 *   <li>Frames ({@link io.rdmx.rpc.RpcFrameDescriptor}) are ring records: call id, method, kind (request,
 *       response, error), fragment offset and message length, and the client's 16-byte id on requests. A body
 *       larger than a ring record is fragmented through the ring and reassembled by call id.</li>
 *   <li>Bodies are opaque bytes; an error carries the class name and message of what the handler threw
 *       ({@link io.rdmx.rpc.RemoteRpcException}). Both sides enforce {@code rdmx.rpc.maxMessageBytes}.</li>
 *   <li>Failure is per peer: a lost or misbehaving server fails only its calls; a malformed frame closes only
 *       that peer's connection. Every wait has a timeout and is woken by close or by the peer's failure.</li>
 * </ul>
 *
 * <p>Errors are {@link io.rdmx.rpc.RpcException}s ({@link java.io.IOException}s) whose messages name the peer
 * and the value. Configuration: {@link io.rdmx.rpc.RpcConfig}.
 */
package io.rdmx.rpc;
