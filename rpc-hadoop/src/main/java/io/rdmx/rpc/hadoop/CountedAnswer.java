package io.rdmx.rpc.hadoop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;

/**
 * The answer of one Hadoop call that came over rdmx: it completes (and so is written to the client) only once
 * the call is both answered ({@link #answer}) and counted in Hadoop's RPC metrics ({@link #counted}), whichever
 * comes second, on the thread that does it. Hadoop's handler counts a call ({@code Server.updateMetrics}) after
 * {@code call.run()} has sent its answer; a stock TCP client is slow enough that the count is usually done before it
 * reads the answer, an rdmx client is not. Holding the answer until the count is done costs no thread hand-off and
 * no allocation: the handler thread that counted writes the answer itself, and this future replaces the plain
 * {@link CompletableFuture} a call had.
 *
 * <p>The two sides may run on different threads (a postponed or deferred answer is sent by whichever thread sends
 * it, possibly before the handler counted): the answer is published with a plain store before the atomic OR of
 * its bit, and read by the other side after its own atomic OR saw that bit. The first answer wins, as for a
 * {@link CompletableFuture}; completing exceptionally (the server stops) does not wait for the count.
 *
 * @param <T> the answer's type
 */
public final class CountedAnswer<T> extends CompletableFuture<T> {
    private static final int ANSWERED = 1;
    private static final int COUNTED = 2;
    private static final VarHandle STATE;
    private static final VarHandle VALUE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(CountedAnswer.class, "state", int.class);
            VALUE = l.findVarHandle(CountedAnswer.class, "value", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused")             // through STATE
    private volatile int state;
    @SuppressWarnings("unused")             // through VALUE
    private Object value;

    /**
     * The call's answer: completes this future now if the call was counted already, else when it is.
     *
     * @param answer the answer, not null
     * @return false if the call was answered before (this answer is dropped)
     */
    public boolean answer(T answer) {
        if (answer == null) {
            throw new NullPointerException("answer");
        }
        if (!VALUE.compareAndSet(this, (Object) null, (Object) answer)) {
            return false;
        }
        if (((int) STATE.getAndBitwiseOr(this, ANSWERED) & COUNTED) != 0) {
            complete(answer);
        }
        return true;
    }

    /** Hadoop counted the call in its metrics: completes this future now if it was answered already. */
    @SuppressWarnings("unchecked")
    public void counted() {
        int prior = (int) STATE.getAndBitwiseOr(this, COUNTED);
        if ((prior & COUNTED) == 0 && (prior & ANSWERED) != 0) {
            complete((T) VALUE.get(this));     // read after the OR that saw ANSWERED: the answerer's store is visible
        }
    }

    /** @return whether Hadoop counted the call */
    public boolean isCounted() {
        return ((int) STATE.getVolatile(this) & COUNTED) != 0;
    }
}
