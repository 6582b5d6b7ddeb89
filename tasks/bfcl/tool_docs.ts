/**
 * Tool documents for the generated tasks, in BFCL's document shape (`name`, `description`, `parameters` with
 * `properties` and `required`), written in Crucible's own words and kept to the methods the generator's worlds
 * call plus their closest neighbours, so that a tiny model's prompt stays short. Runs on BFCL's own files use the
 * documents in their `multi_turn_func_doc/` instead.
 */
import type { FunctionDoc } from "./entries.ts";

type P = Record<string, [type: string, description: string]>;

function doc(name: string, description: string, params: P, required: string[] = Object.keys(params)): FunctionDoc {
  const properties = Object.fromEntries(
    Object.entries(params).map(([k, [type, d]]) => [k, { type, description: d }]),
  );
  return { name, description, parameters: { type: "dict", properties, required } };
}

const FS: FunctionDoc[] = [
  doc("cat", "Show the contents of a file in the current directory.", { file_name: ["string", "The file."] }),
  doc("cd", "Change the current directory (one level, or '..').", { folder: ["string", "The folder."] }),
  doc("cp", "Copy a file or directory.", { source: ["string", "What to copy."], destination: ["string", "Where."] }),
  doc("echo", "Write text to a file, or show it when no file is given.", {
    content: ["string", "The text."],
    file_name: ["string", "The file to write."],
  }, ["content"]),
  doc("grep", "Find the lines of a file that hold a pattern.", {
    file_name: ["string", "The file."],
    pattern: ["string", "The text to find."],
  }),
  doc("ls", "List the current directory.", { a: ["boolean", "Include hidden entries."] }, []),
  doc("mkdir", "Make a directory in the current one.", { dir_name: ["string", "Its name."] }),
  doc("mv", "Move or rename a file or directory.", {
    source: ["string", "What to move."],
    destination: ["string", "A directory to move into, or a new name."],
  }),
  doc("pwd", "Show the current directory's path.", {}),
  doc("rm", "Remove a file or directory.", { file_name: ["string", "What to remove."] }),
  doc("sort", "Sort a file's lines.", { file_name: ["string", "The file."] }),
  doc("touch", "Create an empty file in the current directory.", { file_name: ["string", "Its name."] }),
  doc("wc", "Count a file's lines, words or characters.", {
    file_name: ["string", "The file."],
    mode: ["string", "'l' lines, 'w' words, 'c' characters."],
  }, ["file_name"]),
];

const MATH: FunctionDoc[] = [
  doc("add", "Add two numbers.", { a: ["float", "First."], b: ["float", "Second."] }),
  doc("subtract", "Subtract b from a.", { a: ["float", "From."], b: ["float", "Taken away."] }),
  doc("multiply", "Multiply two numbers.", { a: ["float", "First."], b: ["float", "Second."] }),
  doc("divide", "Divide a by b.", { a: ["float", "Numerator."], b: ["float", "Denominator."] }),
  doc("mean", "The mean of a list of numbers.", { numbers: ["array", "The numbers."] }),
  doc("max_value", "The largest of a list of numbers.", { numbers: ["array", "The numbers."] }),
  doc("min_value", "The smallest of a list of numbers.", { numbers: ["array", "The numbers."] }),
  doc("square_root", "The square root of a number.", {
    number: ["float", "The number."],
    precision: ["integer", "Decimal places."],
  }),
];

const TICKET: FunctionDoc[] = [
  doc("create_ticket", "Open a ticket as the logged-in user.", {
    title: ["string", "Its title."],
    description: ["string", "Details."],
    priority: ["integer", "1 (lowest) to 5."],
  }, ["title"]),
  doc("get_ticket", "Show a ticket.", { ticket_id: ["integer", "Its id."] }),
  doc("close_ticket", "Close a ticket.", { ticket_id: ["integer", "Its id."] }),
  doc("resolve_ticket", "Resolve a ticket with a note.", {
    ticket_id: ["integer", "Its id."],
    resolution: ["string", "How it was resolved."],
  }),
  doc("edit_ticket", "Change fields of a ticket.", {
    ticket_id: ["integer", "Its id."],
    updates: ["dict", "Fields to change: title, description, status, priority."],
  }),
  doc("get_user_tickets", "List the logged-in user's tickets.", { status: ["string", "Only this status."] }, []),
];

const TWITTER: FunctionDoc[] = [
  doc("post_tweet", "Post a tweet as the logged-in user.", {
    content: ["string", "The text."],
    tags: ["array", "Hashtags."],
    mentions: ["array", "User names mentioned."],
  }, ["content"]),
  doc("comment", "Comment on a tweet.", { tweet_id: ["integer", "Its id."], comment_content: ["string", "The text."] }),
  doc("retweet", "Retweet a tweet.", { tweet_id: ["integer", "Its id."] }),
  doc("mention", "Mention users in a tweet.", {
    tweet_id: ["integer", "Its id."],
    mentioned_usernames: ["array", "User names."],
  }),
  doc("follow_user", "Follow a user.", { username_to_follow: ["string", "The user."] }),
  doc("search_tweets", "Find tweets that hold a keyword.", { keyword: ["string", "The keyword."] }),
  doc("get_tweet", "Show a tweet.", { tweet_id: ["integer", "Its id."] }),
];

/** The generated tasks' tool documents by class. */
export const GENERATED_DOCS: Readonly<Record<string, readonly FunctionDoc[]>> = {
  GorillaFileSystem: FS,
  MathAPI: MATH,
  TicketAPI: TICKET,
  TwitterAPI: TWITTER,
};
