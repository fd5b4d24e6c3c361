/**
 * Ring channels: the communication protocol of the DAIS 2016 shuffling middleware on the transport SPI.
 *
 * <ul>
 *   <li>One registered, contiguous region per pair of nodes ({@link io.rdmx.channel.PairLayout}), carved into
 *       one circular buffer per pair of workers; the sender's outgoing buffer mirrors the receiver's incoming
 *       buffer, so data is WRITTEN to the same offsets.</li>
 *   <li>The receiver learns of data by a notification ({@link io.rdmx.channel.NotificationDescriptor}): a
 *       batched SEND with the new heads, or the immediate of a WRITE_WITH_IMM. Nobody polls every buffer.</li>
 *   <li>The receiver reports consumption (credits) only after a configurable amount; the sender computes free
 *       space from the last credit.</li>
 *   <li>A WRITE is posted once {@link io.rdmx.channel.ChannelConfig#batchThreshold()} bytes wait, on flush, or
 *       after the flush interval; notifications are queued and sent in batches.</li>
 *   <li>Records ({@link io.rdmx.channel.RecordDescriptor}) are length-prefixed, aligned, and carry a stream id
 *       so several users multiplex one buffer pair.</li>
 *   <li>Mapped channels ({@link io.rdmx.channel.SharedRing}): where both ends can map each other's memory (shm,
 *       loopback) and {@code rdmx.channel.mapped} is on at both, writers claim and commit straight into the
 *       peer's ring, heads and credits are release stores in shared memory, and a SEND (a doorbell) goes only
 *       to a side that sleeps. Other providers keep the WRITE path.</li>
 * </ul>
 *
 * Memory ordering follows the vocabulary of {@code io.rdmx.transport.internal}: positions are published by
 * release stores and read by acquire loads; sleep/wake-up pairs a volatile waiter store with a full fence.
 *
 * <p>Threads: one writer thread per {@link io.rdmx.channel.ChannelWriter}, one reader thread per
 * {@link io.rdmx.channel.ChannelReader}, and the engine's network thread. Nothing blocks without a timeout, and
 * a failing peer or a closing engine wakes every blocked thread with an exception naming the peer.
 */
package io.rdmx.channel;
