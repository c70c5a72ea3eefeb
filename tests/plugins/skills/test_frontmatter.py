"""Parsing and writing SKILL.md front matter without a YAML library."""

import pytest

from neta_skills.frontmatter import SkillFormatError, check_name, parse_skill_md, render_skill_md


def test_parse_skill_md_reads_fields_and_body():
    document = parse_skill_md(
        "---\nname: deploy\ndescription: Ship the site.\nversion: '2'\n---\n\n# Steps\n1. go\n"
    )
    assert document.name == "deploy"
    assert document.description == "Ship the site."
    assert document.fields == {"name": "deploy", "description": "Ship the site.", "version": "2"}
    assert document.body == "\n# Steps\n1. go\n"


def test_parse_skill_md_accepts_quotes_comments_blank_lines_and_crlf():
    text = (
        "---\r\n# a comment\r\n\r\nname: 'it''s'\r\n"
        'description: "Use when: deploying \\"prod\\" # not a comment"\r\n---\r\nbody\r\n'
    )
    with pytest.raises(SkillFormatError, match="invalid skill name"):
        parse_skill_md(text)
    document = parse_skill_md(text.replace("'it''s'", "'its'"))
    assert document.name == "its"
    assert document.description == 'Use when: deploying "prod" # not a comment'
    assert document.body == "body\r\n"


def test_render_skill_md_round_trips_and_quotes_when_needed():
    text = render_skill_md("a.b-c_d", "Use when: things break #badly", "\n\nDo it.\n\n")
    assert text == (
        '---\nname: a.b-c_d\ndescription: "Use when: things break #badly"\n---\n\nDo it.\n'
    )
    document = parse_skill_md(text, expected_name="a.b-c_d")
    assert document.description == "Use when: things break #badly"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("name: x\ndescription: y\n", "must start with a '---' line"),
        ("---\nname: x\ndescription: y\n", "never closed"),
        ("---\nname: x\n---\nbody", "lacks the 'description' field"),
        ("---\ndescription: y\n---\nbody", "lacks the 'name' field"),
        ("---\nname: x\nname: x\ndescription: y\n---\n", "line 3: 'name' is given twice"),
        ("---\nname: x\ndescription: y\n  more: z\n---\n", "line 4 is indented"),
        ("---\nname: x\ndescription: [a, b]\n---\n", "starts with '\\['"),
        ("---\nname: x\ndescription: |\n---\n", "starts with '\\|'"),
        ("---\nname: x\ndescription: a: b\n---\n", "contains ': '"),
        ("---\nname: x\ndescription: a #b\n---\n", "comment"),
        ('---\nname: x\ndescription: "open\n---\n', "double-quoted value .* malformed"),
        ("---\nname: x\ndescription: 'it's'\n---\n", "single-quoted value .* malformed"),
        ("---\nname: x\ndescription:\n---\n", "description is empty"),
        ('---\nname: x\ndescription: "a\\nb"\n---\n', "single line"),
        ("---\nname: Bad Name\ndescription: y\n---\n", "invalid skill name"),
        ("---\nname: x\njust words\n---\n", "not of the form 'key: value'"),
        ("---\nname: x\ndescription: " + "d" * 1025 + "\n---\n", "limit is 1,024"),
    ],
)
def test_parse_skill_md_malformed_front_matter_is_refused_with_the_reason(text, reason):
    with pytest.raises(SkillFormatError, match=reason):
        parse_skill_md(text)


def test_parse_skill_md_name_differing_from_the_folder_is_refused():
    with pytest.raises(SkillFormatError, match="names the skill 'a' but its folder is 'b'"):
        parse_skill_md("---\nname: a\ndescription: d\n---\n", expected_name="b")


@pytest.mark.parametrize("name", ["deploy\n", "Deploy", "-deploy", ""])
def test_check_name_refuses_names_outside_the_pattern(name):
    with pytest.raises(SkillFormatError, match="invalid skill name"):
        check_name(name)


def test_parse_skill_md_name_with_a_trailing_newline_is_refused():
    with pytest.raises(SkillFormatError, match="invalid skill name"):
        parse_skill_md('---\nname: "deploy\\n"\ndescription: d\n---\n')
