/**
 * How a worker publishes a played group: on its own subject (`crucible.trajectories.NAME`, the only one its
 * credentials allow), under its own message id (messages.ts groupMessageId: its name and the bytes' SHA-256), and
 * what the stream's answer means. The stream stores a message once per id: a publish retried after a lost answer is
 * told "duplicate", and that is the worker's own message, stored by the earlier try. A "duplicate" for an id this
 * worker never sent means another client published those very bytes under its id first, and the group never reached
 * the stream: the worker says so in its log, and its caller hands the prompt back to the queue to be played again
 * (new timings, new bytes, a new id).
 *
 * @example
 * ```ts
 * const publisher = new GroupPublisher(cluster, "a", console.log);
 * if (!(await publisher.publish(group))) msg.nak(); // played again
 * ```
 */
import { encode, type GroupMessage, groupMessageId } from "./messages.ts";
import { type Cluster, retrying, TRAJECTORY_SUBJECT } from "./nats.ts";

/** Ids remembered: far more than the groups a worker publishes in the stream's ten-minute de-duplication window. */
const REMEMBERED = 10_000;

/** A worker's publisher of groups; see the module header. */
export class GroupPublisher {
  /** Ids this worker published, oldest first. */
  readonly #sent = new Set<string>();

  constructor(readonly cluster: Cluster, readonly name: string, readonly line: (text: string) => void) {}

  /**
   * Publishes `g`: true once the stream holds it (stored now, or by an earlier try of this worker), false when the
   * stream took it for a message this worker never sent (said on the log).
   */
  async publish(g: GroupMessage): Promise<boolean> {
    const bytes = encode(g), id = groupMessageId(this.name, bytes);
    const mine = this.#sent.has(id);
    this.#remember(id);
    let tries = 0;
    const ack = await retrying("Publishing a group", () => {
      tries++;
      return this.cluster.js.publish(`${TRAJECTORY_SUBJECT}.${this.name}`, bytes, { msgID: id });
    });
    // A second try told "duplicate" is the first try's message, whose answer was lost.
    if (!ack.duplicate || mine || tries > 1) return true;
    this.line(
      `Worker ${this.name}: the stream took its group of step ${g.step}, group ${g.group} as a duplicate of message ` +
        `${id}, which this worker never sent: another client published under this worker's id (with its ` +
        `credentials or the learner's; if they may be in other hands: deno task cluster revoke ${this.name}). The ` +
        "prompt goes back to the queue to be played again.",
    );
    return false;
  }

  #remember(id: string): void {
    this.#sent.delete(id);
    this.#sent.add(id);
    if (this.#sent.size > REMEMBERED) this.#sent.delete(this.#sent.values().next().value!);
  }
}
