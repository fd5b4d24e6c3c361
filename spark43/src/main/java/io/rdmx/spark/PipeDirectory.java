package io.rdmx.spark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.util.RpcUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Where the reduce tasks of each pipelined shuffle read: the driver's table (an endpoint on Spark's RPC), filled by
 * each reduce task as it starts and asked by each map task before it sends. An entry is a partition's reader: its
 * executor's pipelined node address, its slot (the ring's worker index) and its session (the channel stream id
 * the reader accepts, new for every registration, so records meant for an earlier reader of the same ring are
 * dropped).
 *
 * <p>Messages are strings, lines separated by {@code \n}: {@code PR shuffle partition executor address slot}
 * (register; the answer is the session), {@code PL shuffle partitions} (look up; the answer is empty until every
 * partition has a reader, then one line per partition {@code address slot session}).
 *
 * <p>A registration is accepted only from the executor it names, as {@link AddressBook} accepts an executor's
 * address: a live executor of the application (its block manager registered with the driver's), the message sent
 * from that executor's host (Spark's {@code RpcCallContext.senderAddress}, the connection it came on) or by the
 * driver to itself (a task of Spark's local mode), and, once one is accepted, only again from the same sender
 * address. Otherwise the driver answers a failure that names the executor, the sender and why.
 */
final class PipeDirectory {
    static final String ENDPOINT = "rdmx-pipelined-shuffle";
    private static final ClassTag<String> STRING = ClassTag$.MODULE$.apply(String.class);
    private static final Logger LOG = LoggerFactory.getLogger(PipeDirectory.class);
    /** Sessions are channel stream ids: 1..65535 (0 is never a session). */
    static final int MAX_SESSION = 65535;

    private PipeDirectory() {
    }

    /** A partition's reader. */
    record Reader(String address, int slot, int session) {
    }

    /** The table (driver side), without the RPC. */
    static final class Table {
        private final Map<Integer, Map<Integer, Reader>> byShuffle = new ConcurrentHashMap<>();
        /** The sender each executor registered from first: later registrations must come from it. */
        private final Map<String, RpcAddress> senders = new ConcurrentHashMap<>();
        private final AddressBook.Executors executors;
        private final AddressBook.SameHost sameHost;
        /** The driver's own RPC address (its own tasks register from it), or null. */
        private final RpcAddress self;
        private int nextSession;

        /**
         * @param executors the application's live executors
         * @param sameHost whether a sender is on an executor's host
         * @param self the driver's RPC address, or null
         */
        Table(AddressBook.Executors executors, AddressBook.SameHost sameHost, RpcAddress self) {
            this.executors = executors;
            this.sameHost = sameHost;
            this.self = self;
        }

        /**
         * @param executorId the executor the registration names
         * @param sender the connection it came on
         * @return the session for a reader now registering
         * @throws SecurityException if the sender is not that executor (naming both and why)
         */
        synchronized int register(int shuffleId, int partition, String executorId, RpcAddress sender, String address,
                                  int slot) {
            String refused = "rdmx pipelined shuffle directory refused executor " + executorId + "'s reader of shuffle "
                + shuffleId + " partition " + partition + " from " + sender + ": ";
            String known = executors.host(executorId);
            if (known == null) {
                throw new SecurityException(refused + "no live executor of this application has that id");
            }
            boolean fromSelf = self != null && self.equals(sender);
            if (!fromSelf && (sender == null || !sameHost.test(known, sender.host()))) {
                throw new SecurityException(refused + "the sender is not on the executor's host=" + known);
            }
            RpcAddress first = senders.putIfAbsent(executorId, sender);
            if (first != null && !first.equals(sender)) {
                throw new SecurityException(refused + "that executor registered from " + first + " before");
            }
            nextSession = nextSession % MAX_SESSION + 1;
            byShuffle.computeIfAbsent(shuffleId, k -> new ConcurrentHashMap<>())
                .put(partition, new Reader(address, slot, nextSession));
            return nextSession;
        }

        /**
         * @return every partition's reader in order, or null while one is missing
         */
        Reader[] lookup(int shuffleId, int partitions) {
            Map<Integer, Reader> m = byShuffle.get(shuffleId);
            if (m == null || m.size() < partitions) {
                return null;
            }
            Reader[] out = new Reader[partitions];
            for (int p = 0; p < partitions; p++) {
                out[p] = m.get(p);
                if (out[p] == null) {
                    return null;
                }
            }
            return out;
        }

        /** @return registered readers of a shuffle */
        int registered(int shuffleId) {
            Map<Integer, Reader> m = byShuffle.get(shuffleId);
            return m == null ? 0 : m.size();
        }

        void forget(int shuffleId) {
            byShuffle.remove(shuffleId);
        }

        /**
         * Answers one message.
         *
         * @param msg the message
         * @param sender the connection it came on ({@code RpcCallContext.senderAddress})
         * @return the answer
         */
        String handle(String msg, RpcAddress sender) {
            String[] f = msg.split("\n");
            try {
                if (f.length == 6 && "PR".equals(f[0])) {
                    return Integer.toString(register(Integer.parseInt(f[1]), Integer.parseInt(f[2]), f[3], sender,
                        f[4], Integer.parseInt(f[5])));
                }
                if (f.length == 3 && "PL".equals(f[0])) {
                    Reader[] r = lookup(Integer.parseInt(f[1]), Integer.parseInt(f[2]));
                    if (r == null) {
                        return "";
                    }
                    StringBuilder sb = new StringBuilder();
                    for (Reader x : r) {
                        sb.append(x.address()).append(' ').append(x.slot()).append(' ').append(x.session())
                            .append('\n');
                    }
                    return sb.toString();
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("malformed rdmx pipelined shuffle message: " + msg, e);
            }
            throw new IllegalArgumentException("malformed rdmx pipelined shuffle message: " + msg);
        }

        static Reader[] parse(String answer, int partitions) {
            if (answer == null || answer.isEmpty()) {
                return null;
            }
            String[] lines = answer.split("\n");
            if (lines.length != partitions) {
                throw new IllegalStateException("rdmx pipelined shuffle directory answered " + lines.length
                    + " readers for " + partitions + " partitions");
            }
            Reader[] out = new Reader[partitions];
            for (int p = 0; p < partitions; p++) {
                String[] w = lines[p].split(" ");
                out[p] = new Reader(w[0], Integer.parseInt(w[1]), Integer.parseInt(w[2]));
            }
            return out;
        }
    }

    /** The driver's endpoint. */
    static final class Driver extends TextRpcEndpoint {
        private final Table table;

        Driver(RpcEnv env, Table table) {
            super(env, LOG, "rdmx pipelined shuffle", "PR\n", "PL\n");
            this.table = table;
        }

        @Override
        String answer(String msg, RpcAddress sender) {
            return table.handle(msg, sender);
        }
    }

    /** An executor's client of the driver's table. */
    static final class Client {
        private final RpcEndpointRef driver;

        Client(SparkConf conf, RpcEnv env) {
            this.driver = RpcUtils.makeDriverRef(ENDPOINT, conf, env);
        }

        int register(int shuffleId, int partition, String executorId, String address, int slot) {
            String r = driver.askSync("PR\n" + shuffleId + "\n" + partition + "\n" + executorId + "\n" + address
                + "\n" + slot, STRING);
            return Integer.parseInt(r);
        }

        /**
         * Asks until every partition has a reader.
         *
         * @param interrupted checked between two asks: true stops the wait
         * @throws IllegalStateException if they did not all start within the wait (names the shuffle and counts)
         */
        Reader[] await(int shuffleId, int partitions, long waitMillis, java.util.function.BooleanSupplier interrupted)
            throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
            long pause = 1;
            while (true) {
                Reader[] r = Table.parse(driver.askSync("PL\n" + shuffleId + "\n" + partitions, STRING), partitions);
                if (r != null) {
                    return r;
                }
                if (interrupted.getAsBoolean()) {
                    throw new InterruptedException("rdmx pipelined shuffle " + shuffleId + ": task killed while "
                        + "waiting for its reduce tasks");
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("rdmx pipelined shuffle " + shuffleId + ": not every one of its "
                        + partitions + " reduce tasks started within " + waitMillis + " ms ("
                        + PipeConf.WAIT_MS_KEY + ")");
                }
                // a bounded poll of the driver while the co-scheduled reduce tasks start
                TimeUnit.MILLISECONDS.sleep(pause);
                pause = Math.min(pause * 2, 50);
            }
        }
    }
}
