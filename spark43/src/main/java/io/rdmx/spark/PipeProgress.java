package io.rdmx.spark;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * What a pipelined reader has heard from the map tasks of its range, and whether it is done: END from every map
 * for every partition it reads. Used by one reader thread (not thread-safe).
 */
final class PipeProgress {
    private final int startMap;
    private final int endMap;
    private final int startPartition;
    private final int partitions;
    private final BitSet ended = new BitSet();
    private final BitSet started = new BitSet();
    /** The peer that carries each started map's records (map index to peer name). */
    private final Map<Integer, String> peerOfMap = new HashMap<>();
    private int endedCount;

    /**
     * @param startMap the first map index read
     * @param endMap one past the last
     * @param startPartition the first partition read
     * @param endPartition one past the last
     */
    PipeProgress(int startMap, int endMap, int startPartition, int endPartition) {
        if (startMap < 0 || endMap < startMap || startPartition < 0 || endPartition <= startPartition) {
            throw new IllegalArgumentException("pipelined reader of maps [" + startMap + ", " + endMap
                + ") and partitions [" + startPartition + ", " + endPartition + "): empty or negative range");
        }
        this.startMap = startMap;
        this.endMap = endMap;
        this.startPartition = startPartition;
        this.partitions = endPartition - startPartition;
    }

    private int bit(int mapIndex, int partition, String what) {
        if (mapIndex < startMap || mapIndex >= endMap || partition < startPartition
            || partition >= startPartition + partitions) {
            throw new IllegalStateException("pipelined reader of maps [" + startMap + ", " + endMap
                + ") and partitions [" + startPartition + ", " + (startPartition + partitions) + ") got " + what
                + " of map " + mapIndex + " for partition " + partition + ": outside its range");
        }
        return (mapIndex - startMap) * partitions + (partition - startPartition);
    }

    /**
     * A map task began sending.
     *
     * @param mapIndex its partition
     * @param partition the reduce partition
     * @param peer the peer that carries it
     */
    void start(int mapIndex, int partition, String peer) {
        int b = bit(mapIndex, partition, "START");
        started.set(b);
        peerOfMap.put(mapIndex, peer);
    }

    /**
     * A map task ended.
     *
     * @param mapIndex its partition
     * @param partition the reduce partition
     * @throws IllegalStateException if it had not started, or ended twice
     */
    void end(int mapIndex, int partition) {
        int b = bit(mapIndex, partition, "END");
        if (!started.get(b)) {
            throw new IllegalStateException("pipelined reader: END of map " + mapIndex + " for partition "
                + partition + " before its START");
        }
        if (ended.get(b)) {
            throw new IllegalStateException("pipelined reader: a second END of map " + mapIndex + " for partition "
                + partition);
        }
        ended.set(b);
        endedCount++;
    }

    /**
     * Checks a DATA record's origin.
     *
     * @param mapIndex its map
     * @param partition its partition
     * @throws IllegalStateException if that map has not started or has ended
     */
    void data(int mapIndex, int partition) {
        int b = bit(mapIndex, partition, "DATA");
        if (!started.get(b) || ended.get(b)) {
            throw new IllegalStateException("pipelined reader: records of map " + mapIndex + " for partition "
                + partition + (ended.get(b) ? " after its END" : " before its START"));
        }
    }

    /**
     * A peer's connection was lost.
     *
     * @param peer the peer
     * @return a description of the maps it carried that had not ended, or null if none (the loss does not matter
     *         to this reader)
     */
    String lost(String peer) {
        StringBuilder sb = null;
        for (Map.Entry<Integer, String> e : peerOfMap.entrySet()) {
            if (!e.getValue().equals(peer)) {
                continue;
            }
            int m = e.getKey();
            for (int p = 0; p < partitions; p++) {
                int b = (m - startMap) * partitions + p;
                if (started.get(b) && !ended.get(b)) {
                    if (sb == null) {
                        sb = new StringBuilder("map ");
                    } else {
                        sb.append(", ");
                    }
                    sb.append(m);
                    break;
                }
            }
        }
        return sb == null ? null : sb.toString();
    }

    /** @return whether every map ended for every partition */
    boolean done() {
        return endedCount == (endMap - startMap) * partitions;
    }

    /** @return ended (map, partition) pairs and all there are, for messages */
    String describe() {
        return endedCount + " of " + (endMap - startMap) * partitions + " (map, partition) streams ended";
    }
}
