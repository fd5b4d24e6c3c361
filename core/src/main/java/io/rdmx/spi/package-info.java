/**
 * Hooks through which optional modules change how core runs, found with {@link java.util.ServiceLoader}:
 * {@link io.rdmx.spi.PlatformHooks} (thread pinning and tuned defaults, provided by {@code rdmx-affinity}).
 */
package io.rdmx.spi;
