package io.rdmx.affinity;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A placement policy of the OSU OpenPOWER study for communication threads.
 *
 * @param kind the policy
 * @param threads N for O2NTS(N) and O2NTC(N), else 0
 */
public record Policy(Kind kind, int threads) {
    /** The policies. */
    public enum Kind {
        /** No pinning. */
        NONE,
        /** Each communication thread to N hardware threads on the socket closest to the NIC. */
        O2NTS,
        /** Each communication thread to all cores of the socket closest to the NIC. */
        O2ACS,
        /** Each communication thread to one physical core of that socket, round robin. */
        O2OCS,
        /** Each communication thread to N hardware threads on any socket. */
        O2NTC,
        /** Each communication thread to one physical core on any socket, round robin. */
        O2OCC
    }

    private static final Pattern SYNTAX = Pattern.compile("([A-Za-z0-9]+)\\s*(?:[(:]\\s*(\\d+)\\s*\\)?)?");

    /** The no-pinning policy. */
    public static final Policy NONE = new Policy(Kind.NONE, 0);

    /** Validates. */
    public Policy {
        boolean needsN = kind == Kind.O2NTS || kind == Kind.O2NTC;
        if (needsN && threads < 1) {
            throw new IllegalArgumentException("policy " + kind + " needs N >= 1 hardware threads, got " + threads);
        }
        if (!needsN && threads != 0) {
            throw new IllegalArgumentException("policy " + kind + " takes no N, got " + threads);
        }
    }

    /**
     * Parses {@code O2NTS(2)}, {@code o2nts:2}, {@code O2ACS}, {@code none}.
     *
     * @param s the text
     * @return the policy
     * @throws IllegalArgumentException listing the valid forms
     */
    public static Policy parse(String s) {
        Matcher m = SYNTAX.matcher(s.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("bad affinity policy '" + s + "'; use NONE, O2NTS(N), O2ACS, O2OCS, "
                + "O2NTC(N) or O2OCC");
        }
        Kind k;
        try {
            k = Kind.valueOf(m.group(1).toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown affinity policy '" + s + "'; use NONE, O2NTS(N), O2ACS, "
                + "O2OCS, O2NTC(N) or O2OCC", e);
        }
        int n = m.group(2) == null ? 0 : Integer.parseInt(m.group(2));
        return new Policy(k, n);
    }

    @Override
    public String toString() {
        return threads > 0 ? kind + "(" + threads + ")" : kind.name();
    }
}
