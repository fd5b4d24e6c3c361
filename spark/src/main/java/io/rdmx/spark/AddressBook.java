package io.rdmx.spark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEndpoint;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.util.RpcUtils;
import scala.Function1;
import scala.PartialFunction;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * Executors' rdmx addresses: a Spark RPC endpoint on the driver ({@value #ENDPOINT}) where each executor
 * registers its advertisement before it writes map output, and where readers look up the executors they fetch
 * from (cached). Messages are plain strings (no classes of this jar cross Spark's RPC, so no class loader
 * questions): {@code R\n<executor>\n<host>\n<advertisement>} answered {@code ok}, and {@code L\n<executor>}
 * answered {@code <host>\n<advertisement>} or an empty string for an executor that never registered.
 */
final class AddressBook {
    /** The endpoint's name. */
    static final String ENDPOINT = "rdmx-shuffle-addresses";
    private static final ClassTag<String> STRING = ClassTag$.MODULE$.apply(String.class);

    private AddressBook() {
    }

    /** The driver's endpoint. */
    static final class Driver implements RpcEndpoint {
        private final RpcEnv env;
        private final Map<String, String> peers = new ConcurrentHashMap<>();

        Driver(RpcEnv env) {
            this.env = env;
        }

        @Override
        public RpcEnv rpcEnv() {
            return env;
        }

        @Override
        public PartialFunction<Object, BoxedUnit> receiveAndReply(RpcCallContext context) {
            return new AbstractPartialFunction<Object, BoxedUnit>() {
                @Override
                public boolean isDefinedAt(Object x) {
                    return x instanceof String s && (s.startsWith("R\n") || s.startsWith("L\n"));
                }

                @Override
                public <A1, B1> B1 applyOrElse(A1 x, Function1<A1, B1> fallback) {
                    if (!isDefinedAt(x)) {
                        return fallback.apply(x);
                    }
                    context.reply(handle((String) x));
                    @SuppressWarnings("unchecked")
                    B1 unit = (B1) BoxedUnit.UNIT;
                    return unit;
                }
            };
        }

        String handle(String msg) {
            String[] parts = msg.split("\n", 3);
            if (msg.startsWith("R\n")) {
                if (parts.length < 3) {
                    throw new IllegalArgumentException("rdmx address registration without host: " + msg);
                }
                peers.put(parts[1], parts[2]);
                return "ok";
            }
            return peers.getOrDefault(parts[1], "");
        }

        /**
         * @param executorId an executor
         * @return its {@code host\nadvertisement}, or null
         */
        String lookup(String executorId) {
            return peers.get(executorId);
        }
    }

    /** An executor's view: registers itself, looks up others (cached). */
    static final class Client {
        private final RpcEndpointRef driver;
        private final Map<String, String[]> cache = new ConcurrentHashMap<>();

        Client(SparkConf conf, RpcEnv env) {
            this.driver = RpcUtils.makeDriverRef(ENDPOINT, conf, env);
        }

        void register(String executorId, String host, String advertisement) {
            String r = driver.askSync("R\n" + executorId + "\n" + host + "\n" + advertisement, STRING);
            if (!"ok".equals(r)) {
                throw new IllegalStateException("rdmx address book at the driver refused executor " + executorId
                    + ": " + r);
            }
        }

        /**
         * @param executorId an executor
         * @return {host, advertisement}
         * @throws IllegalStateException if the driver knows no such executor
         */
        String[] lookup(String executorId) {
            String[] c = cache.get(executorId);
            if (c != null) {
                return c;
            }
            String r = driver.askSync("L\n" + executorId, STRING);
            if (r == null || r.isEmpty()) {
                throw new IllegalStateException("the driver's rdmx address book has no executor " + executorId);
            }
            String[] hostAndAd = r.split("\n", 2);
            if (hostAndAd.length < 2) {
                throw new IllegalStateException("rdmx address of executor " + executorId + " malformed: " + r);
            }
            cache.put(executorId, hostAndAd);
            return hostAndAd;
        }

        void forget(String executorId) {
            cache.remove(executorId);
        }
    }
}
