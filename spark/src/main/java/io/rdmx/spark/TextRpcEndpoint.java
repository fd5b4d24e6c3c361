package io.rdmx.spark;

import java.util.List;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEndpoint;
import org.apache.spark.rpc.RpcEnv;
import org.slf4j.Logger;
import scala.Function1;
import scala.PartialFunction;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * A driver endpoint of Spark's RPC that takes text messages starting with its own prefixes and answers each with
 * text ({@link #answer}); a message it refuses (a {@link RuntimeException} from {@link #answer}: malformed, or not
 * from who it names) is logged and answered with that failure, and the endpoint goes on serving.
 */
abstract class TextRpcEndpoint implements RpcEndpoint {
    private final RpcEnv env;
    private final Logger log;
    private final String what;
    private final List<String> prefixes;

    /**
     * @param env the driver's RPC environment
     * @param log where refusals are logged
     * @param what what the endpoint is, for the log lines
     * @param prefixes the prefixes of the messages it takes
     */
    TextRpcEndpoint(RpcEnv env, Logger log, String what, String... prefixes) {
        this.env = env;
        this.log = log;
        this.what = what;
        this.prefixes = List.of(prefixes);
    }

    /**
     * @param msg a message with one of the endpoint's prefixes
     * @param sender the address of the connection it came on ({@code RpcCallContext.senderAddress})
     * @return the answer
     * @throws RuntimeException if the message is refused (its message is logged and sent back)
     */
    abstract String answer(String msg, RpcAddress sender);

    @Override
    public RpcEnv rpcEnv() {
        return env;
    }

    @Override
    public PartialFunction<Object, BoxedUnit> receiveAndReply(RpcCallContext context) {
        return new AbstractPartialFunction<Object, BoxedUnit>() {
            @Override
            public boolean isDefinedAt(Object x) {
                return x instanceof String s && prefixes.stream().anyMatch(s::startsWith);
            }

            @Override
            public <A1, B1> B1 applyOrElse(A1 x, Function1<A1, B1> fallback) {
                if (!isDefinedAt(x)) {
                    return fallback.apply(x);
                }
                String reply;
                try {
                    reply = answer((String) x, context.senderAddress());
                } catch (RuntimeException e) {
                    log.warn("{}: {}", what, e.getMessage());
                    context.sendFailure(e);
                    return unit();
                }
                context.reply(reply);
                return unit();
            }
        };
    }

    @SuppressWarnings("unchecked")
    private static <B1> B1 unit() {
        return (B1) BoxedUnit.UNIT;
    }
}
