package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmx.channel.RingBuffer;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker's flush holds each other process's connection corked ({@link ShuffleTransport.Outbox#cork}) while it
 * emits its packs to that process's workers and flushes their outboxes, so that on a socket the flush is one system
 * call per process, not one per ring. The service runs over {@link Recording}, a transport whose outboxes log what
 * the worker does to them, in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CorkedFlushTest {
    private static final int PROCESSES = 3;
    private static final int WORKERS = 2;

    /** Rank 0 of three processes: outboxes to the other ranks are rings nobody reads, logging every call. */
    static final class Recording implements ShuffleTransport {
        final List<String> log = new ArrayList<>();

        @Override
        public Outbox outbox(int localWorker, int rank, int remoteWorker) {
            String to = rank + "." + remoteWorker;
            return new RingOutbox(new RingBuffer(ByteBuffer.allocateDirect(1 << 16), 1 << 12)) {
                @Override
                public void commit() {
                    super.commit();
                    log.add("commit " + to);
                }

                @Override
                public void flush() {
                    log.add("flush " + to);
                }

                @Override
                public void cork() {
                    log.add("cork " + to);
                }

                @Override
                public void uncork() {
                    log.add("uncork " + to);
                }

                @Override
                public boolean corks() {
                    return true;
                }
            };
        }

        @Override
        public int poll(int localWorker, Receiver d, int limit) {
            return 0;
        }

        @Override
        public int read(int localWorker, Receiver d, int limit, long timeoutNanos) {
            return 0;
        }

        @Override
        public void wakeup(int localWorker) {
        }

        @Override
        public void park(int localWorker, long timeoutNanos) {
            log.add("park");
        }

        @Override
        public String provider(int rank) {
            return "recording";
        }

        @Override
        public long networkRecords() {
            return 0;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aFlushCorksEachOtherProcessOnceAroundEverythingItSendsThere() throws Exception {
        ShuffleConfig cfg = ShuffleConfig.builder(0, PROCESSES, WORKERS).job("corked-flush").build();
        Recording[] t = new Recording[1];
        try (ShuffleService s = ShuffleService.open(cfg, c -> t[0] = new Recording())) {
            Worker w = s.worker(0);
            List<Exchange<RowView>> to = new ArrayList<>();
            for (int g = WORKERS; g < PROCESSES * WORKERS; g++) {
                to.add(s.intExchange(g, Routing.gather(g)));
            }
            for (Exchange<RowView> ex : to) {
                assertEquals(Worker.OK, w.offerInt(ex, ex.id()));
            }
            List<String> log = t[0].log;
            assertEquals(List.of(), log, "a row waits in its pack until the flush");

            assertEquals(Worker.OK, w.flush());

            // the first outbox of each other process carries its cork; the packs go out and every outbox of every
            // process is flushed inside the corks
            assertEquals(List.of("cork 1.0", "cork 2.0",
                "commit 1.0", "commit 1.1", "commit 2.0", "commit 2.1",
                "flush 1.0", "flush 1.1", "flush 2.0", "flush 2.1",
                "uncork 1.0", "uncork 2.0"), log);
        }
    }
}
