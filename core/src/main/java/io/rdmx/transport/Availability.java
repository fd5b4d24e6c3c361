package io.rdmx.transport;

import java.util.Objects;

/**
 * Whether a provider can be used on this machine, and why not.
 *
 * @param usable true when {@link Fabric#open(NodeOptions)} is expected to work here
 * @param reason a human-readable explanation (what was found, or what is missing)
 */
public record Availability(boolean usable, String reason) {
    /** Validates the fields. */
    public Availability {
        Objects.requireNonNull(reason, "reason");
    }

    /**
     * A usable provider.
     *
     * @param reason what makes it usable
     * @return the availability
     */
    public static Availability usable(String reason) {
        return new Availability(true, reason);
    }

    /**
     * An unusable provider.
     *
     * @param reason what is missing
     * @return the availability
     */
    public static Availability unusable(String reason) {
        return new Availability(false, reason);
    }
}
