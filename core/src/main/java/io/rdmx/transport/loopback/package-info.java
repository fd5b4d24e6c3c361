/**
 * The {@code loopback} provider: nodes inside one JVM. Deterministic (every request executes on the posting
 * thread, or on the thread that posts the receive it was waiting for) and with fault injection
 * ({@link io.rdmx.transport.loopback.LoopbackFaults}). For tests.
 */
package io.rdmx.transport.loopback;
