package io.rdmx.affinity;

import java.util.BitSet;
import java.util.Objects;
import java.util.stream.IntStream;

/**
 * An immutable set of CPU numbers of any size (never a single 64-bit mask: machines have more than 64 CPUs).
 * Parses and prints the Linux list format ({@code 0-3,8,10-11}).
 */
public final class CpuSet {
    private final BitSet bits;

    private CpuSet(BitSet bits) {
        this.bits = bits;
    }

    /**
     * @param cpus CPU numbers
     * @return the set
     */
    public static CpuSet of(int... cpus) {
        BitSet b = new BitSet();
        for (int c : cpus) {
            if (c < 0) {
                throw new IllegalArgumentException("negative cpu=" + c);
            }
            b.set(c);
        }
        return new CpuSet(b);
    }

    /**
     * @param cpus CPU numbers
     * @return the set
     */
    public static CpuSet of(IntStream cpus) {
        return of(cpus.toArray());
    }

    /**
     * Parses the Linux CPU list format.
     *
     * @param list e.g. {@code 0-3,8}; blank is the empty set
     * @return the set
     * @throws IllegalArgumentException naming the bad part
     */
    public static CpuSet parse(String list) {
        BitSet b = new BitSet();
        String s = list.trim();
        if (s.isEmpty()) {
            return new CpuSet(b);
        }
        for (String part : s.split(",")) {
            String p = part.trim();
            try {
                int dash = p.indexOf('-');
                if (dash < 0) {
                    b.set(Integer.parseInt(p));
                } else {
                    int lo = Integer.parseInt(p.substring(0, dash));
                    int hi = Integer.parseInt(p.substring(dash + 1));
                    if (hi < lo) {
                        throw new IllegalArgumentException("cpu range " + p + " is reversed in list=" + list);
                    }
                    b.set(lo, hi + 1);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad cpu list part '" + p + "' in list=" + list, e);
            }
        }
        return new CpuSet(b);
    }

    /** @return the CPUs in ascending order */
    public int[] toArray() {
        return bits.stream().toArray();
    }

    /** @return how many CPUs */
    public int size() {
        return bits.cardinality();
    }

    /** @return true if empty */
    public boolean isEmpty() {
        return bits.isEmpty();
    }

    /**
     * @param cpu a CPU number
     * @return true if in the set
     */
    public boolean contains(int cpu) {
        return cpu >= 0 && bits.get(cpu);
    }

    /** @return the highest CPU number, or -1 */
    public int max() {
        return bits.length() - 1;
    }

    /**
     * @param other another set
     * @return the intersection
     */
    public CpuSet and(CpuSet other) {
        BitSet b = (BitSet) bits.clone();
        b.and(other.bits);
        return new CpuSet(b);
    }

    /**
     * @param other another set
     * @return the union
     */
    public CpuSet or(CpuSet other) {
        BitSet b = (BitSet) bits.clone();
        b.or(other.bits);
        return new CpuSet(b);
    }

    /**
     * The mask as {@code sched_setaffinity} expects it: little-endian bytes, bit n of byte n/8 for CPU n.
     *
     * @param bytes the mask size in bytes (a multiple of 8, enough for {@link #max()})
     * @return the mask
     */
    public byte[] toMask(int bytes) {
        if (bytes * 8 <= max()) {
            throw new IllegalArgumentException("mask of " + bytes + " bytes cannot hold cpu=" + max());
        }
        byte[] m = new byte[bytes];
        byte[] raw = bits.toByteArray();
        System.arraycopy(raw, 0, m, 0, Math.min(raw.length, bytes));
        return m;
    }

    /**
     * @param mask a mask as filled by {@code sched_getaffinity}
     * @return the set
     */
    public static CpuSet fromMask(byte[] mask) {
        return new CpuSet(BitSet.valueOf(mask));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CpuSet && ((CpuSet) o).bits.equals(bits);
    }

    @Override
    public int hashCode() {
        return Objects.hash(bits);
    }

    /** @return the Linux list format, e.g. {@code 0-3,8} */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        int i = bits.nextSetBit(0);
        while (i >= 0) {
            int end = bits.nextClearBit(i) - 1;
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(i);
            if (end > i) {
                sb.append('-').append(end);
            }
            i = bits.nextSetBit(end + 1);
        }
        return sb.toString();
    }
}
