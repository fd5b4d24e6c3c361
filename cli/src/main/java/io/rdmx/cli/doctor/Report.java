package io.rdmx.cli.doctor;

import java.util.List;

/**
 * The diagnosis of one provider.
 *
 * @param provider the provider name
 * @param checks the lines, in the order they were checked
 */
public record Report(String provider, List<Check> checks) {
    /** Copies the list. */
    public Report {
        checks = List.copyOf(checks);
    }

    /** @return true when no line is a {@link Check.Level#FAIL} */
    public boolean usable() {
        return checks.stream().noneMatch(c -> c.level() == Check.Level.FAIL);
    }
}
