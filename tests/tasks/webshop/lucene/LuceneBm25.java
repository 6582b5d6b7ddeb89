// Lucene's own BM25 over documents and queries given on stdin, for tests/tasks/webshop/lucene_test.ts: Anserini's
// DefaultEnglishAnalyzer chain (StandardTokenizer, EnglishPossessiveFilter, LowerCaseFilter, Lucene's English stop
// words, PorterStemFilter), BM25Similarity(0.9, 0.4) as pyserini's defaults, one SHOULD term query per query token
// as Anserini's BagOfWordsQueryGenerator builds them, every hit ranked by score then id (Anserini's tie-break).
// Input: a line "N", then N lines "id<TAB>text", then query lines. Output per query: "id score" pairs, tab-separated.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.en.*;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;

public class LuceneBm25 {
  static Analyzer analyzer() {
    return new Analyzer() {
      protected TokenStreamComponents createComponents(String field) {
        Tokenizer source = new StandardTokenizer();
        TokenStream r = new EnglishPossessiveFilter(source);
        r = new LowerCaseFilter(r);
        r = new StopFilter(r, EnglishAnalyzer.ENGLISH_STOP_WORDS_SET);
        r = new PorterStemFilter(r);
        return new TokenStreamComponents(source, r);
      }
    };
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    int n = Integer.parseInt(in.readLine().trim());
    Analyzer a = analyzer();
    ByteBuffersDirectory dir = new ByteBuffersDirectory();
    BM25Similarity sim = new BM25Similarity(0.9f, 0.4f);
    IndexWriterConfig cfg = new IndexWriterConfig(a).setSimilarity(sim);
    String[] ids = new String[n];
    try (IndexWriter w = new IndexWriter(dir, cfg)) {
      for (int i = 0; i < n; i++) {
        String[] parts = in.readLine().split("\t", 2);
        Document d = new Document();
        d.add(new StringField("id", parts[0], Field.Store.YES));
        d.add(new TextField("contents", parts[1], Field.Store.NO));
        w.addDocument(d);
      }
    }
    IndexReader reader = DirectoryReader.open(dir);
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(sim);
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    for (String q; (q = in.readLine()) != null;) {
      BooleanQuery.Builder b = new BooleanQuery.Builder();
      try (TokenStream ts = a.tokenStream("contents", q)) {
        CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
        ts.reset();
        while (ts.incrementToken()) b.add(new TermQuery(new Term("contents", term.toString())), BooleanClause.Occur.SHOULD);
        ts.end();
      }
      TopDocs top = searcher.search(b.build(), Math.max(1, reader.numDocs()));
      List<String[]> hits = new ArrayList<>();
      for (ScoreDoc sd : top.scoreDocs) hits.add(new String[] {reader.document(sd.doc).get("id"), Float.toString(sd.score)});
      hits.sort((x, y) -> {
        int c = Float.compare(Float.parseFloat(y[1]), Float.parseFloat(x[1]));
        return c != 0 ? c : x[0].compareTo(y[0]);
      });
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < Math.min(50, hits.size()); i++) line.append(i > 0 ? "\t" : "").append(hits.get(i)[0]).append(' ').append(hits.get(i)[1]);
      out.println(line);
    }
  }
}
