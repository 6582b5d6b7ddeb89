/**
 * BFCL's TwitterAPI (posting_api.py): log in, post, retweet, comment, mention, follow, search, with their exact
 * result and error texts. Tweets are keyed by int ids (the scenario's string keys converted, as BFCL does); the
 * comments map keeps the scenario's string keys while `comment` adds int keys, so both kinds can sit side by side
 * as in Python (Maps keep them apart). `post_tweet`'s default `tags` / `mentions` lists are shared between the
 * tweets posted without them, as Python's mutable defaults are (here per instance, in BFCL per process), so a
 * `mention` on one such tweet shows on the others.
 * State compared: username, password, authenticated, tweets, comments, retweets, following_list, tweet_counter.
 */
import { ApiCallError, type MethodSpec, PyApiBase } from "./base.ts";
import {
  dictEntries,
  getItem,
  hashKey,
  pyContains,
  pyDeepCopy,
  pyEq,
  pyIter,
  pyLower,
  pyStr,
  pyTypeName,
  toPlain,
  truthy,
} from "./py.ts";

type Tweet = Record<string, unknown>;

/** Python's `int(k)` for a scenario key. */
function intKey(k: unknown): unknown {
  return typeof k === "string" && /^\s*[+-]?\d+\s*$/.test(k) ? Number(k) : hashKey(k);
}

/** The posting class; one instance per episode. */
export class TwitterAPI extends PyApiBase {
  readonly name = "TwitterAPI";
  username = "john";
  password = "john123";
  authenticated: unknown = false;
  tweets = new Map<unknown, Tweet>();
  comments = new Map<unknown, unknown[]>();
  retweets = new Map<unknown, unknown[]>();
  followingList: unknown[] = ["alice", "bob"];
  tweetCounter: unknown = 0;
  #defaultTags: unknown[] = [];
  #defaultMentions: unknown[] = [];

  loadScenario(config: Record<string, unknown>, _longContext = false): void {
    const c = pyDeepCopy(config);
    this.username = (c.username ?? "john") as string;
    this.password = (c.password ?? "john123") as string;
    this.authenticated = c.authenticated ?? false;
    this.tweets = new Map(dictEntries((c.tweets ?? {}) as object).map(([k, v]) => [intKey(k), v as Tweet]));
    this.comments = new Map(dictEntries((c.comments ?? {}) as object) as [unknown, unknown[]][]);
    this.retweets = new Map(dictEntries((c.retweets ?? {}) as object) as [unknown, unknown[]][]);
    this.followingList = (c.following_list ?? ["alice", "bob"]) as unknown[];
    this.tweetCounter = c.tweet_counter ?? 0;
  }

  state(): Record<string, unknown> {
    return toPlain({
      username: this.username,
      password: this.password,
      authenticated: this.authenticated,
      tweets: this.tweets,
      comments: this.comments,
      retweets: this.retweets,
      following_list: this.followingList,
      tweet_counter: this.tweetCounter,
    }) as Record<string, unknown>;
  }

  #notFound(id: unknown): Record<string, string> {
    return { error: `Tweet with ID ${pyStr(id)} not found.` };
  }

  #auth(action: string): Record<string, string> | undefined {
    return this.authenticated ? undefined : { error: `User not authenticated. Please authenticate before ${action}.` };
  }

  protected readonly table: Record<string, MethodSpec> = {
    authenticate_twitter: {
      params: ["username", "password"],
      run: ({ username, password }) => {
        if (pyEq(username, this.username) && pyEq(password, this.password)) {
          this.authenticated = true;
          return { authentication_status: true };
        }
        return { authentication_status: false };
      },
    },
    posting_get_login_status: {
      params: [],
      run: () => ({ login_status: truthy(this.authenticated) }),
    },
    post_tweet: {
      params: ["content", ["tags", undefined], ["mentions", undefined]],
      run: ({ content, tags, mentions }) => {
        const denied = this.#auth("posting");
        if (denied) return denied;
        const tweet: Tweet = {
          id: this.tweetCounter,
          username: this.username,
          content,
          tags: tags === undefined ? this.#defaultTags : tags,
          mentions: mentions === undefined ? this.#defaultMentions : mentions,
        };
        this.tweets.set(hashKey(this.tweetCounter), tweet);
        this.tweetCounter = (this.tweetCounter as number) + 1;
        return tweet;
      },
    },
    retweet: {
      params: ["tweet_id"],
      run: ({ tweet_id }) => {
        const denied = this.#auth("retweeting");
        if (denied) return denied;
        if (!this.tweets.has(hashKey(tweet_id))) return this.#notFound(tweet_id);
        if (!this.retweets.has(this.username)) this.retweets.set(this.username, []);
        const mine = this.retweets.get(this.username)!;
        if (mine.some((t) => pyEq(t, tweet_id))) return { retweet_status: "Already retweeted" };
        mine.push(tweet_id);
        return { retweet_status: "Successfully retweeted" };
      },
    },
    comment: {
      params: ["tweet_id", "comment_content"],
      run: ({ tweet_id, comment_content }) => {
        const denied = this.#auth("commenting");
        if (denied) return denied;
        if (!this.tweets.has(hashKey(tweet_id))) return this.#notFound(tweet_id);
        const key = hashKey(tweet_id);
        if (!this.comments.has(key)) this.comments.set(key, []);
        this.comments.get(key)!.push({ username: this.username, content: comment_content });
        return { comment_status: "Comment added successfully" };
      },
    },
    mention: {
      params: ["tweet_id", "mentioned_usernames"],
      run: ({ tweet_id, mentioned_usernames }) => {
        const tweet = this.tweets.get(hashKey(tweet_id));
        if (!tweet) return this.#notFound(tweet_id);
        const list = getItem(tweet, "mentions");
        if (!Array.isArray(list)) {
          throw new ApiCallError(`'${pyTypeName(list)}' object has no attribute 'extend'`, "AttributeError");
        }
        list.push(...pyIter(mentioned_usernames));
        return { mention_status: "Users mentioned successfully" };
      },
    },
    follow_user: {
      params: ["username_to_follow"],
      run: ({ username_to_follow }) => {
        const denied = this.#auth("following");
        if (denied) return denied;
        if (this.followingList.some((u) => pyEq(u, username_to_follow))) return { follow_status: false };
        this.followingList.push(username_to_follow);
        return { follow_status: true };
      },
    },
    list_all_following: {
      params: [],
      run: () => this.#auth("listing following") ?? { following_list: this.followingList },
    },
    unfollow_user: {
      params: ["username_to_unfollow"],
      run: ({ username_to_unfollow }) => {
        const denied = this.#auth("unfollowing");
        if (denied) return denied;
        const i = this.followingList.findIndex((u) => pyEq(u, username_to_unfollow));
        if (i < 0) return { unfollow_status: false };
        this.followingList.splice(i, 1);
        return { unfollow_status: true };
      },
    },
    get_tweet: {
      params: ["tweet_id"],
      run: ({ tweet_id }) => this.tweets.get(hashKey(tweet_id)) ?? this.#notFound(tweet_id),
    },
    get_user_tweets: {
      params: ["username"],
      run: ({ username }) => [...this.tweets.values()].filter((t) => pyEq(t.username, username)),
    },
    search_tweets: {
      params: ["keyword"],
      run: ({ keyword }) => {
        // Evaluated per tweet as Python's comprehension does: no tweet, no error for a bad keyword.
        return [...this.tweets.values()].filter((t) =>
          pyLower(getItem(t, "content")).includes(pyLower(keyword)) ||
          pyContains(pyIter(getItem(t, "tags")).map(pyLower), pyLower(keyword))
        );
      },
    },
    get_tweet_comments: {
      params: ["tweet_id"],
      run: ({ tweet_id }) => {
        if (!this.tweets.has(hashKey(tweet_id))) return this.#notFound(tweet_id);
        return this.comments.get(hashKey(tweet_id)) ?? [];
      },
    },
    get_user_stats: {
      params: ["username"],
      run: ({ username }) => ({
        tweet_count: [...this.tweets.values()].filter((t) => pyEq(t.username, username)).length,
        following_count: pyEq(username, this.username) ? this.followingList.length : 0,
        retweet_count: (this.retweets.get(hashKey(username)) ?? []).length,
      }),
    },
  };
}
