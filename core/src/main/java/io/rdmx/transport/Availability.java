package io.rdmx.transport;

import java.util.Objects;

/**
 * Whether a provider can be used on this machine, and why not.
 *
 * @param usable true when {@link Fabric#open(NodeOptions)} is expected to work here
 * @param reason a human-readable explanation (what was found, or what is missing)
 * @param fix for an unusable provider, what would make it usable when the provider knows (else null)
 */
public record Availability(boolean usable, String reason, String fix) {
    /** Validates the fields. */
    public Availability {
        Objects.requireNonNull(reason, "reason");
        if (usable && fix != null) {
            throw new IllegalArgumentException("a usable provider has nothing to fix: " + fix);
        }
    }

    /**
     * @param usable whether the provider can work here
     * @param reason why
     */
    public Availability(boolean usable, String reason) {
        this(usable, reason, null);
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

    /**
     * An unusable provider, with what would make it usable.
     *
     * @param reason what is missing
     * @param fix what to do about it
     * @return the availability
     */
    public static Availability unusable(String reason, String fix) {
        return new Availability(false, reason, Objects.requireNonNull(fix, "fix"));
    }
}
