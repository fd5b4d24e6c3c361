package io.rdmx.verbs;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.QpRegistrations;
import java.lang.foreign.MemorySegment;

/**
 * The registrations of one region's memory, one per queue pair's protection domain it is used in
 * ({@link QpRegistrations}; a domain is known by its {@link Endpoint}, whose lock guards it).
 */
final class Registrations extends QpRegistrations<Endpoint, MemorySegment> {
    private final VerbsNode node;
    private final MemorySegment memory;

    Registrations(VerbsNode node, MemorySegment memory, int access, Endpoint grantee) {
        super(access, grantee);
        this.node = node;
        this.memory = memory;
    }

    @Override
    protected MemorySegment register(Endpoint ep, int access) throws RdmxException {
        return node.register(ep.pd(), memory, access);
    }

    @Override
    protected void deregister(MemorySegment mr) {
        node.deregister(mr);
    }

    @Override
    protected void forgotten(Endpoint ep) {
        ep.forget(this);
    }

    @Override
    protected String describe() {
        return "verbs: region at " + Long.toHexString(memory.address());
    }
}
