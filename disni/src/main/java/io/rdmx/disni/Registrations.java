package io.rdmx.disni;

import com.ibm.disni.verbs.IbvMr;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.QpRegistrations;
import java.nio.ByteBuffer;

/**
 * The registrations of one region's memory, one per queue pair's protection domain it is used in
 * ({@link QpRegistrations}, as on {@code verbs}; a domain is its {@link Domain}, whose monitor guards it).
 */
final class Registrations extends QpRegistrations<Domain, IbvMr> {
    private final DisniNode node;
    private final ByteBuffer memory;

    Registrations(DisniNode node, ByteBuffer memory, int access, Domain grantee) {
        super(access, grantee);
        this.node = node;
        this.memory = memory;
    }

    @Override
    protected IbvMr register(Domain d, int access) throws RdmxException {
        return node.register(d.pd(), memory, access);
    }

    @Override
    protected void deregister(IbvMr mr) {
        node.deregister(mr);
    }

    @Override
    protected void forgotten(Domain d) {
        d.forget(this);
    }

    @Override
    protected String describe() {
        return "disni: region of " + memory.capacity() + " bytes";
    }
}
