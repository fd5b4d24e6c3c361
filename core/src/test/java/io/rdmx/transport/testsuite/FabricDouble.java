package io.rdmx.transport.testsuite;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.HostNeed;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.util.Set;

/**
 * A provider as code that chooses or diagnoses providers sees it: a name, an availability, traits and needs, and no
 * nodes ({@link #open} refuses, naming it). For tests of {@code auto}, the adapters' choices and the doctor.
 */
public final class FabricDouble implements Fabric {
    private final String name;
    private final Availability availability;
    private final FabricTraits traits;
    private final Set<HostNeed> needs;

    /**
     * @param name its name
     * @param availability what {@link #availability()} says
     * @param traits what {@link #traits()} says
     * @param needs what {@link #needs()} says, or null for the default (what rdmx registers for the name)
     */
    public FabricDouble(String name, Availability availability, FabricTraits traits, Set<HostNeed> needs) {
        this.name = name;
        this.availability = availability;
        this.traits = traits;
        this.needs = needs;
    }

    /**
     * @param name its name
     * @param reach how far it reaches
     * @param nic the device it uses
     * @param rank its rank for {@code auto}
     * @return a usable double with these traits
     */
    public static FabricDouble usable(String name, FabricTraits.Reach reach, FabricTraits.Nic nic, int rank) {
        return new FabricDouble(name, Availability.usable("a test double"), new FabricTraits(reach, nic, rank), null);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Availability availability() {
        return availability;
    }

    @Override
    public Node open(NodeOptions options) throws RdmxException {
        throw new RdmxException("test double provider name=" + name + " opens no node");
    }

    @Override
    public FabricTraits traits() {
        return traits;
    }

    @Override
    public Set<HostNeed> needs() {
        return needs != null ? needs : Fabric.super.needs();
    }
}
