package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** Rings, outboxes and routings for the unit tests of a worker's pieces. */
final class TestRings {
    /** Routes a key to the worker {@code key mod workers}. */
    static final Routing<RowView> BY_VALUE = new Routing<>() {
        @Override
        public int route(RowView row, int workers) {
            throw new UnsupportedOperationException("routed by key");
        }

        @Override
        public int routeKey(long key, int workers) {
            return (int) Math.floorMod(key, (long) workers);
        }
    };

    /** A record read back: its stream and a copy of its payload. */
    record Rec(int stream, ByteBuffer payload) {
        int length() {
            return payload.capacity();
        }

        int intAt(int at) {
            return payload.getInt(at);
        }
    }

    private TestRings() {
    }

    static RingBuffer ring(int capacity) {
        return new RingBuffer(ByteBuffer.allocateDirect(capacity), capacity / 4 - 8);
    }

    static ShuffleTransport.Outbox outbox(RingBuffer ring) {
        return new RingOutbox(ring) {
            @Override
            public void flush() {
                // visible at commit
            }
        };
    }

    static ShuffleTransport.Outbox[] outboxes(RingBuffer... rings) {
        ShuffleTransport.Outbox[] o = new ShuffleTransport.Outbox[rings.length];
        for (int i = 0; i < rings.length; i++) {
            o[i] = outbox(rings[i]);
        }
        return o;
    }

    /** Reads every record of a ring. */
    static List<Rec> drain(RingBuffer ring) {
        List<Rec> out = new ArrayList<>();
        ring.read((stream, buf, off, len) -> {
            ByteBuffer copy = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
            copy.put(0, buf, off, len);
            out.add(new Rec(stream, copy));
        }, Integer.MAX_VALUE);
        return out;
    }

    static Exchange<RowView> ints(int id) {
        return new Exchange<>(id, BY_VALUE, null, 4, 4);
    }
}
