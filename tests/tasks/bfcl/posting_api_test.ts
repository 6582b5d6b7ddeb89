/**
 * TwitterAPI (posting_api) against a transcript of every method, errors included, with the exact texts gorilla's
 * Python class gives: authentication gates, int tweet ids beside the scenario's string comment keys, and the shared
 * default `mentions` list (a mention on one tweet posted without mentions shows on the next).
 */
import assert from "node:assert/strict";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { playTranscript, runCall, type Step } from "./transcript.ts";

const SCENARIO = {
  username: "analyst_pro",
  password: "Kj8#mP9$vL2",
  tweet_counter: 2,
  tweets: {
    "0": { id: 0, username: "analyst_pro", content: "Budget analysis done", tags: ["#Budget"], mentions: [] },
    "1": { id: 1, username: "bob", content: "Hello world", tags: [], mentions: ["@x"] },
  },
  comments: { "1": [{ username: "bob", content: "first" }] },
};

Deno.test("TwitterAPI: every method and its error texts as BFCL's Python gives them", () => {
  const api = newInstance("TwitterAPI");
  api.loadScenario(structuredClone(SCENARIO));
  const steps: Step[] = [
    ["posting_get_login_status", {}, '{"login_status": false}'],
    ["post_tweet", { "content": "hi" }, '{"error": "User not authenticated. Please authenticate before posting."}'],
    ["retweet", { "tweet_id": 0 }, '{"error": "User not authenticated. Please authenticate before retweeting."}'],
    [
      "comment",
      { "tweet_id": 0, "comment_content": "x" },
      '{"error": "User not authenticated. Please authenticate before commenting."}',
    ],
    [
      "follow_user",
      { "username_to_follow": "carol" },
      '{"error": "User not authenticated. Please authenticate before following."}',
    ],
    ["list_all_following", {}, '{"error": "User not authenticated. Please authenticate before listing following."}'],
    [
      "unfollow_user",
      { "username_to_unfollow": "bob" },
      '{"error": "User not authenticated. Please authenticate before unfollowing."}',
    ],
    ["authenticate_twitter", { "username": "analyst_pro", "password": "wrong" }, '{"authentication_status": false}'],
    [
      "authenticate_twitter",
      { "username": "analyst_pro", "password": "Kj8#mP9$vL2" },
      '{"authentication_status": true}',
    ],
    ["posting_get_login_status", {}, '{"login_status": true}'],
    [
      "post_tweet",
      { "content": "New post", "tags": ["#a"] },
      '{"id": 2, "username": "analyst_pro", "content": "New post", "tags": ["#a"], "mentions": []}',
    ],
    [
      "post_tweet",
      { "content": "Plain post" },
      '{"id": 3, "username": "analyst_pro", "content": "Plain post", "tags": [], "mentions": []}',
    ],
    [
      "post_tweet",
      { "content": "Another plain" },
      '{"id": 4, "username": "analyst_pro", "content": "Another plain", "tags": [], "mentions": []}',
    ],
    [
      "mention",
      { "tweet_id": 3, "mentioned_usernames": ["@dan"] },
      '{"mention_status": "Users mentioned successfully"}',
    ],
    [
      "get_tweet",
      { "tweet_id": 4 },
      '{"id": 4, "username": "analyst_pro", "content": "Another plain", "tags": [], "mentions": ["@dan"]}',
    ],
    ["get_tweet", { "tweet_id": 9 }, '{"error": "Tweet with ID 9 not found."}'],
    ["mention", { "tweet_id": 9, "mentioned_usernames": [] }, '{"error": "Tweet with ID 9 not found."}'],
    ["retweet", { "tweet_id": 1 }, '{"retweet_status": "Successfully retweeted"}'],
    ["retweet", { "tweet_id": 1 }, '{"retweet_status": "Already retweeted"}'],
    ["retweet", { "tweet_id": 42 }, '{"error": "Tweet with ID 42 not found."}'],
    ["comment", { "tweet_id": 1, "comment_content": "second" }, '{"comment_status": "Comment added successfully"}'],
    ["comment", { "tweet_id": 7, "comment_content": "no" }, '{"error": "Tweet with ID 7 not found."}'],
    ["get_tweet_comments", { "tweet_id": 1 }, "[{'username': 'analyst_pro', 'content': 'second'}]"],
    ["get_tweet_comments", { "tweet_id": 0 }, "[]"],
    ["get_tweet_comments", { "tweet_id": 8 }, '{"error": "Tweet with ID 8 not found."}'],
    ["follow_user", { "username_to_follow": "alice" }, '{"follow_status": false}'],
    ["follow_user", { "username_to_follow": "carol" }, '{"follow_status": true}'],
    ["unfollow_user", { "username_to_unfollow": "zed" }, '{"unfollow_status": false}'],
    ["unfollow_user", { "username_to_unfollow": "bob" }, '{"unfollow_status": true}'],
    ["list_all_following", {}, '{"following_list": ["alice", "carol"]}'],
    [
      "get_user_tweets",
      { "username": "bob" },
      "[{'id': 1, 'username': 'bob', 'content': 'Hello world', 'tags': [], 'mentions': ['@x']}]",
    ],
    [
      "search_tweets",
      { "keyword": "#budget" },
      "[{'id': 0, 'username': 'analyst_pro', 'content': 'Budget analysis done', 'tags': ['#Budget'], 'mentions': []}]",
    ],
    [
      "search_tweets",
      { "keyword": "PLAIN" },
      "[{'id': 3, 'username': 'analyst_pro', 'content': 'Plain post', 'tags': [], 'mentions': ['@dan']}, {'id': 4, 'username': 'analyst_pro', 'content': 'Another plain', 'tags': [], 'mentions': ['@dan']}]",
    ],
    ["get_user_stats", { "username": "analyst_pro" }, '{"tweet_count": 4, "following_count": 2, "retweet_count": 1}'],
    ["get_user_stats", { "username": "bob" }, '{"tweet_count": 1, "following_count": 0, "retweet_count": 0}'],
    ["get_tweet", { "tweet_id": "1" }, '{"error": "Tweet with ID 1 not found."}'],
    [
      "post_tweet",
      {},
      "Error during execution: TwitterAPI.post_tweet() missing 1 required positional argument: 'content'",
    ],
    [
      "get_tweet",
      { "tweet_id": 1, "x": 2 },
      "Error during execution: TwitterAPI.get_tweet() got an unexpected keyword argument 'x'",
    ],
  ];
  playTranscript(api, steps);
  const state = api.state();
  assert.equal(state.tweet_counter, 5);
  assert.equal(state.authenticated, true);
  assert.deepEqual(state.following_list, ["alice", "carol"]);
  assert.deepEqual(state.retweets, { analyst_pro: [1] });
  // The scenario's "1" key and comment()'s int 1 key are two entries in Python; plain JSON shows both as "1".
  assert.deepEqual(Object.keys(state.comments as object), ["1"]);
});

Deno.test("TwitterAPI: the caller's scenario is never mutated", () => {
  const scenario = structuredClone(SCENARIO);
  const api = newInstance("TwitterAPI");
  api.loadScenario(scenario);
  runCall(api, "authenticate_twitter", { username: "analyst_pro", password: "Kj8#mP9$vL2" });
  runCall(api, "mention", { tweet_id: 0, mentioned_usernames: ["@y"] });
  assert.deepEqual(scenario.tweets["0"].mentions, []);
});
