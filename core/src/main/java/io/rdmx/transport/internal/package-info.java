/**
 * Internals shared by the providers. Not API: may change in any release.
 *
 * <h2>Memory-ordering vocabulary</h2>
 * Used in every name and comment of rdmx:
 * <ul>
 *   <li><b>plain</b>: an ordinary load or store, no ordering.</li>
 *   <li><b>release store</b> ({@code putXxxRelease}, {@code setRelease}): every earlier load and store is
 *       visible before the stored value. Publishes data.</li>
 *   <li><b>acquire load</b> ({@code getXxxAcquire}, {@code getAcquire}): no later load or store moves before it.
 *       Pairs with a release store: what was written before the release is seen after the acquire.</li>
 *   <li><b>volatile</b>: sequentially consistent; used where a store must be ordered before a later load
 *       (the Dekker pattern of sleep/wake-up), or a {@code VarHandle.fullFence()} is written out.</li>
 * </ul>
 * Hand-offs between threads through JCTools queues or {@code java.util.concurrent} are happens-before edges
 * and need nothing more.
 */
package io.rdmx.transport.internal;
