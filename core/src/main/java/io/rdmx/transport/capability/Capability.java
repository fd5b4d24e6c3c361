package io.rdmx.transport.capability;

import java.util.List;

/**
 * A fast-path capability a connection may offer ({@link io.rdmx.transport.Connection#capability(Class)}): the
 * marker of the small interfaces of this package, so that the lookup takes nothing else (no way to reach a
 * provider's own class through it).
 */
public interface Capability {
    /** Every capability interface of this package (diagnostics, and the conformance suite's check of a provider). */
    List<Class<? extends Capability>> ALL = List.of(RemoteMapping.class, Bells.class, InlineCompletions.class,
        InputFollowing.class, Corking.class);
}
