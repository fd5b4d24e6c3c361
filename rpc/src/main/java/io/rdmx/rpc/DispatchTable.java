package io.rdmx.rpc;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link RpcServer}'s methods: for each method id, its handler and where that runs ({@link Mode}), the fallback
 * for every other method, and the running of a handler with the answering for it (what it returned, what it threw,
 * or that there is no handler, naming the method and the server). Immutable once built.
 */
final class DispatchTable {
    private static final Logger LOG = LoggerFactory.getLogger(RpcServer.class);

    /** Where a method's handler runs and how it answers. */
    enum Mode {
        /** An {@link RpcHandler} on a handler thread: what it returns is the answer. */
        BLOCKING,
        /** An {@link RpcAsyncHandler} on a handler thread: it answers later, from any thread. */
        ASYNC,
        /** An {@link RpcAsyncHandler} on the server's reader thread as the request is reassembled. */
        ON_READER,
        /** No handler and no fallback: the call is answered with an error naming the method. */
        NONE
    }

    /** A method's handler and where it runs; runs it ({@link #serve}). */
    static final class Route {
        /** The server's node name (for errors). */
        final String server;
        final Mode mode;
        /** The handler of a {@link Mode#BLOCKING} route, else null. */
        final RpcHandler handler;
        /** The handler of an {@link Mode#ASYNC} or {@link Mode#ON_READER} route, else null. */
        final RpcAsyncHandler asyncHandler;

        private Route(String server, Mode mode, RpcHandler handler, RpcAsyncHandler asyncHandler) {
            this.server = server;
            this.mode = mode;
            this.handler = handler;
            this.asyncHandler = asyncHandler;
        }

        /**
         * The thread the call's route runs on: runs its handler and answers for it through the call's
         * {@link Answerer}: a blocking handler's return value, a handler's failure (an asynchronous handler's only if
         * it did not answer first), or, with no handler, an {@link UnsupportedOperationException} naming the method
         * and the server. Only an error of the JVM itself (out of memory) goes on up, once answered.
         *
         * @param call the call (of this route)
         */
        void serve(RpcCall call) {
            switch (mode) {
                case ASYNC:
                case ON_READER:
                    try {
                        asyncHandler.handle(call);
                    } catch (Throwable e) {
                        LOG.debug("rpc server '{}': asynchronous handler of method={} threw {}", server,
                            call.method(), e.toString());
                        answerThrown(call, e);
                    }
                    return;
                case NONE:
                    if (call.tryClaimAnswer()) {
                        call.answerer().answerError(call, UnsupportedOperationException.class.getName(),
                            "no handler for method=" + call.method() + " on server '" + server + "'");
                    }
                    return;
                default:
                    break;
            }
            ByteBuffer answer;
            try {
                answer = handler.handle(call);
            } catch (Throwable e) {
                LOG.debug("rpc server '{}': handler of method={} threw {}", server, call.method(), e.toString());
                answerThrown(call, e);
                return;
            }
            if (call.tryClaimAnswer()) {
                call.answerer().answer(call, RpcFrameDescriptor.KIND_RESPONSE, answer, null);
            }
        }
    }

    private final Map<Integer, Route> routes;
    /** For a method without a route of its own: the fallback's, or one of {@link Mode#NONE}. */
    private final Route otherwise;

    private DispatchTable(Map<Integer, Route> routes, Route otherwise) {
        this.routes = Map.copyOf(routes);
        this.otherwise = otherwise;
    }

    /** Collects the routes: one handler per method id. */
    static final class Builder {
        private final String server;
        private final Map<Integer, Route> routes = new HashMap<>();
        private RpcHandler fallback;

        /** @param server the server's node name (for errors) */
        Builder(String server) {
            this.server = server;
        }

        /**
         * @param method a method id
         * @param handler serves it on a handler thread
         * @return this
         * @throws IllegalArgumentException if the method has a handler already
         */
        Builder handle(int method, RpcHandler handler) {
            return add(method, new Route(server, Mode.BLOCKING, Objects.requireNonNull(handler, "handler"), null));
        }

        /**
         * @param method a method id
         * @param handler takes its calls
         * @param onReader run on the server's reader thread ({@link Mode#ON_READER}), else on a handler thread
         * @return this
         * @throws IllegalArgumentException if the method has a handler already
         */
        Builder handleAsync(int method, RpcAsyncHandler handler, boolean onReader) {
            return add(method, new Route(server, onReader ? Mode.ON_READER : Mode.ASYNC, null,
                Objects.requireNonNull(handler, "handler")));
        }

        private Builder add(int method, Route r) {
            if (routes.putIfAbsent(method, r) != null) {
                throw new IllegalArgumentException("method=" + method + " has a handler already");
            }
            return this;
        }

        /**
         * @param handler serves every method without a handler of its own, or null for none
         * @return this
         */
        Builder fallback(RpcHandler handler) {
            this.fallback = handler;
            return this;
        }

        /** @return the table */
        DispatchTable build() {
            return new DispatchTable(routes, new Route(server, fallback == null ? Mode.NONE : Mode.BLOCKING,
                fallback, null));
        }
    }

    /**
     * @param method a method id
     * @return its route: its own, else the fallback's, else one of {@link Mode#NONE}
     */
    Route route(int method) {
        Route r = routes.get(method);
        return r != null ? r : otherwise;
    }

    /**
     * A handler threw: the caller gets it as a {@link RemoteRpcException} naming its class, an {@link Error}
     * included (an {@code AssertionError} left the caller waiting out its timeout, and on the reader thread
     * stopped the server reading). Only an error of the JVM itself (out of memory) goes on up, once answered.
     */
    private static void answerThrown(RpcCall call, Throwable e) {
        if (call.tryClaimAnswer()) {
            call.answerer().answerError(call, e.getClass().getName(), e.getMessage());
        }
        if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
            throw (VirtualMachineError) e;
        }
    }
}
